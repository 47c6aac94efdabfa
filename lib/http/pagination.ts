import { z } from "zod";
import { AppError } from "./errors";

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
  throw new AppError("validation_failed", "The cursor is not valid: pass `nextCursor` from a previous page.", {
    errors: [{ path: "query.cursor", code: "invalid_cursor", message: "Unknown cursor" }],
  });
}

/** Given `limit + 1` rows, returns the page and the cursor of the next one. */
export function page<T>(rows: T[], limit: number, cursorOf: (row: T) => Cursor): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const nextCursor = rows.length > limit ? encodeCursor(cursorOf(items[items.length - 1])) : null;
  return { items, nextCursor };
}
