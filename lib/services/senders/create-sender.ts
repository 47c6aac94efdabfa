import "server-only";
import { and, eq } from "drizzle-orm";
import { getDb, type Db } from "@/db/client";
import { senders } from "@/db/schema";
import { newId } from "@/lib/ids";
import type { CreateSenderInput } from "@/lib/schemas/senders";
import { invalid, settingsColumns } from "./sender-settings";
import { senderView } from "./sender-view";

/** Adds a sender; `isDefault: true` makes it the account's default (the previous default stops being one). */
export async function createSender(accountId: string, input: CreateSenderInput) {
  const columns = await settingsColumns(input.kind, input);
  if (!columns) throw invalid(input.kind, `The "${input.kind}" settings are required for a ${input.kind} sender`);
  const db = await getDb();
  const row = await db.transaction(async (tx) => {
    if (input.isDefault) await clearDefault(tx as unknown as Db, accountId);
    const [inserted] = await tx.insert(senders).values({
      id: newId("snd"),
      accountId,
      kind: input.kind,
      name: input.name,
      fromAddress: input.from,
      replyTo: input.replyTo ?? null,
      isDefault: input.isDefault ?? false,
      ratePerSecond: input.ratePerSecond ?? null,
      dailyQuota: input.dailyQuota ?? null,
      ...columns,
    }).returning();
    return inserted;
  });
  return senderView(row);
}

export async function clearDefault(db: Db, accountId: string): Promise<void> {
  await db.update(senders).set({ isDefault: false }).where(and(eq(senders.accountId, accountId), eq(senders.isDefault, true)));
}
