import "server-only";
import { asc, eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { senders } from "@/db/schema";
import { senderView } from "./sender-view";

/** The account's senders, oldest first (an account has a handful). */
export async function listSenders(accountId: string) {
  const db = await getDb();
  const rows = await db.select().from(senders).where(eq(senders.accountId, accountId)).orderBy(asc(senders.createdAt), asc(senders.id));
  return { items: rows.map(senderView) };
}
