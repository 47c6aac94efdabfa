import "server-only";
import { and, desc, eq, ilike, type SQL } from "drizzle-orm";
import { getDb } from "@/db/client";
import { suppressions } from "@/db/schema";
import { decodeCursor, newestFirstAfter, page } from "@/lib/http/pagination";

/** The account's suppression list, newest first; `q` matches part of the address. */
export async function listSuppressions(accountId: string, query: { q?: string; limit: number; cursor?: string }) {
  // Ordered by (createdAt, email): an address is listed once per account, so it breaks ties like an id.
  const conditions: (SQL | undefined)[] = [
    eq(suppressions.accountId, accountId),
    newestFirstAfter(decodeCursor(query.cursor), suppressions.createdAt, suppressions.email),
  ];
  if (query.q) conditions.push(ilike(suppressions.email, `%${query.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`));
  const db = await getDb();
  const rows = await db.select().from(suppressions).where(and(...conditions))
    .orderBy(desc(suppressions.createdAt), desc(suppressions.email)).limit(query.limit + 1);
  const result = page(rows, query.limit, (row) => ({ k: row.createdAt.toISOString(), id: row.email }));
  return {
    items: result.items.map((row) => ({ email: row.email, reason: row.reason, createdAt: row.createdAt.toISOString() })),
    nextCursor: result.nextCursor,
  };
}
