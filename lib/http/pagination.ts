import { and, eq, lt, or, type AnyColumn, type SQL } from "drizzle-orm";
import { z } from "zod";
import { AppError } from "@/lib/errors";

export const paginationQuery = {
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(500).optional(),
};

/** Keyset cursor over (sortKey, id): opaque to clients (base64url JSON). */
export type Cursor = { k: string | number; id: string };

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString("base64url");
}

export function decodeCursor(value: string | undefined): Cursor | undefined {
  if (!value) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(value, "base64url").toString("utf8")) as unknown;
    const result = z.object({ k: z.union([z.string(), z.number()]), id: z.string() }).safeParse(parsed);
    if (result.success) return result.data;
  } catch {
    // fall through
  }
  throw invalidCursor();
}

function invalidCursor(): AppError {
  return new AppError("validation_failed", "The cursor is not valid: pass `nextCursor` from a previous page.", {
    errors: [{ path: "query.cursor", code: "invalid_cursor", message: "Unknown cursor" }],
  });
}

/** The timestamp inside a keyset cursor; a forged or corrupted cursor is a 422, never a 500. */
export function cursorDate(cursor: Cursor): Date {
  const date = new Date(typeof cursor.k === "string" ? cursor.k : Number.NaN);
  if (Number.isNaN(date.getTime())) throw invalidCursor();
  return date;
}

/**
 * The keyset condition of a newest-first list ordered by (`at` desc, `id` desc), whose cursors are
 * `{ k: at.toISOString(), id }`: the rows after the cursor's row (undefined without a cursor: the first page).
 */
export function newestFirstAfter(cursor: Cursor | undefined, at: AnyColumn, id: AnyColumn): SQL | undefined {
  if (!cursor) return undefined;
  const date = cursorDate(cursor);
  return or(lt(at, date), and(eq(at, date), lt(id, cursor.id)));
}

/** The integer sort key inside a keyset cursor (a run's `seq`, a version number); a forged one is a 422. */
export function cursorInteger(cursor: Cursor): number {
  if (typeof cursor.k === "number" && Number.isSafeInteger(cursor.k) && cursor.k > 0) return cursor.k;
  throw invalidCursor();
}

/**
 * The keyset condition of a list ordered by a unique integer column descending (`seq`, a version), whose cursors
 * are `{ k: value, id }`: the rows after the cursor's row (undefined without a cursor: the first page).
 */
export function descendingAfter(cursor: Cursor | undefined, key: AnyColumn): SQL | undefined {
  return cursor ? lt(key, cursorInteger(cursor)) : undefined;
}

/** Given `limit + 1` rows, returns the page and the cursor of the next one. */
export function page<T>(rows: T[], limit: number, cursorOf: (row: T) => Cursor): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const nextCursor = rows.length > limit ? encodeCursor(cursorOf(items[items.length - 1])) : null;
  return { items, nextCursor };
}
