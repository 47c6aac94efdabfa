import "server-only";
import { and, eq } from "drizzle-orm";
import { getDb, type Db } from "@/db/client";
import { senders } from "@/db/schema";
import { now as clockNow } from "@/lib/clock";
import type { UpdateSenderInput } from "@/lib/schemas/senders";
import { clearDefault } from "./create-sender";
import { findSenderRow } from "./find-sender";
import { invalid, settingsColumns } from "./sender-settings";
import { senderView } from "./sender-view";

/**
 * Changes the given fields. A new kind needs that kind's settings; a kind's settings replace the stored ones (a
 * secret left out keeps the stored secret). `isDefault: true` moves the account's default here; false clears it.
 */
export async function updateSender(accountId: string, senderId: string, input: UpdateSenderInput, now = clockNow()) {
  const row = await findSenderRow(accountId, senderId);
  const kind = input.kind ?? row.kind;
  const columns = input[kind] !== undefined ? await settingsColumns(kind, input, row) : undefined;
  if (kind !== row.kind && !columns) throw invalid(kind, `The "${kind}" settings are required to make this a ${kind} sender`);
  const db = await getDb();
  const updated = await db.transaction(async (tx) => {
    if (input.isDefault) await clearDefault(tx as unknown as Db, accountId);
    const [out] = await tx.update(senders).set({
      kind,
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.from !== undefined ? { fromAddress: input.from } : {}),
      ...(input.replyTo !== undefined ? { replyTo: input.replyTo } : {}),
      ...(input.isDefault !== undefined ? { isDefault: input.isDefault } : {}),
      ...(input.ratePerSecond !== undefined ? { ratePerSecond: input.ratePerSecond } : {}),
      ...(input.dailyQuota !== undefined ? { dailyQuota: input.dailyQuota } : {}),
      ...(columns ?? {}),
      lastError: columns ? null : row.lastError,
      updatedAt: new Date(now),
    }).where(and(eq(senders.id, senderId), eq(senders.accountId, accountId))).returning();
    return out;
  });
  return senderView(updated);
}
