import "server-only";
import { and, desc, eq, type SQL } from "drizzle-orm";
import { getDb } from "@/db/client";
import { mailboxMessages } from "@/db/schema";
import { isMailboxActive } from "@/lib/email";
import { notFound } from "@/lib/errors";
import { decodeCursor, newestFirstAfter, page } from "@/lib/http/pagination";

/** The local mailbox, newest first, optionally for one recipient. Exists only while it is the transport. */
export async function listMailbox(query: { to?: string; limit: number; cursor?: string }) {
  if (!isMailboxActive()) throw notFound("The mailbox (email goes through Resend)");
  const conditions: (SQL | undefined)[] = [newestFirstAfter(decodeCursor(query.cursor), mailboxMessages.createdAt, mailboxMessages.id)];
  if (query.to) conditions.push(eq(mailboxMessages.to, query.to));
  const db = await getDb();
  const rows = await db.select().from(mailboxMessages).where(and(...conditions))
    .orderBy(desc(mailboxMessages.createdAt), desc(mailboxMessages.id)).limit(query.limit + 1);
  const result = page(rows, query.limit, (row) => ({ k: row.createdAt.toISOString(), id: row.id }));
  return {
    items: result.items.map((row) => ({
      id: row.id, from: row.from, to: row.to, subject: row.subject, text: row.text, html: row.html,
      kind: row.kind, headers: row.headers ?? {}, createdAt: row.createdAt.toISOString(),
    })),
    nextCursor: result.nextCursor,
  };
}
