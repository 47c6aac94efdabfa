import "server-only";
import { and, desc, eq, ilike, lt, or, type SQL } from "drizzle-orm";
import { getDb } from "@/db/client";
import { suppressions } from "@/db/schema";
import { AppError } from "@/lib/http/errors";
import { decodeCursor, page } from "@/lib/http/pagination";

/** The account's suppression list, newest first; `q` matches part of the address. */
export async function listSuppressions(accountId: string, query: { q?: string; limit: number; cursor?: string }) {
  const cursor = decodeCursor(query.cursor);
  const conditions: SQL[] = [eq(suppressions.accountId, accountId)];
  if (query.q) conditions.push(ilike(suppressions.email, `%${query.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`));
  if (cursor) {
    const at = new Date(String(cursor.k));
    if (Number.isNaN(at.getTime())) throw new AppError("validation_failed", "The cursor is not valid: pass `nextCursor` from a previous page.");
    conditions.push(or(lt(suppressions.createdAt, at), and(eq(suppressions.createdAt, at), lt(suppressions.email, cursor.id)))!);
  }
  const db = await getDb();
  const rows = await db.select().from(suppressions).where(and(...conditions))
    .orderBy(desc(suppressions.createdAt), desc(suppressions.email)).limit(query.limit + 1);
  const result = page(rows, query.limit, (row) => ({ k: row.createdAt.toISOString(), id: row.email }));
  return {
    items: result.items.map((row) => ({ email: row.email, reason: row.reason, createdAt: row.createdAt.toISOString() })),
    nextCursor: result.nextCursor,
  };
}
