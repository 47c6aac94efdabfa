import "server-only";
import { and, eq } from "drizzle-orm";
import { getDb, type Db } from "@/db/client";
import { senders } from "@/db/schema";
import { notFound } from "@/lib/errors";
import { looksLikeId } from "@/lib/ids";
import type { SenderRow } from "./sender-view";

/** The account's sender; another account's or an unknown id: 404. */
export async function findSenderRow(accountId: string, senderId: string, db?: Db): Promise<SenderRow> {
  if (!looksLikeId("snd", senderId)) throw notFound("Sender");
  const conn = db ?? (await getDb());
  const [row] = await conn.select().from(senders).where(and(eq(senders.id, senderId), eq(senders.accountId, accountId)));
  if (!row) throw notFound("Sender");
  return row;
}
