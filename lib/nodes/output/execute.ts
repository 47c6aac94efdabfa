import "server-only";
import { getConfig } from "@/lib/config";
import { getEmailSender } from "@/lib/email";
import { NodeError, type NodeExecutor, type NodeOf, type NodeRuntime } from "../types";
import { countSent, markSent, markUnsentFailed, quotaUsage, recordAllPending, sentIndexes } from "./ledger";
import { forEachItems, renderEmail, validateAllEmails, type RenderedEmail } from "./render-emails";
import { sendBatchWithRetry } from "./send-with-retry";

export const EMAILS_PER_BATCH = 100;

const ledgerKey = (node: NodeOf<"OUTPUT">, rt: NodeRuntime) => ({ runId: rt.runId, nodeId: node.id, accountId: rt.accountId });

/**
 * OUTPUT runs as several durable steps: this first one renders every email (refusing all if any is malformed),
 * checks the daily quota and records every email as pending in the send ledger; then one step per 100 emails sends
 * those not yet sent; `complete` counts what the ledger says was sent.
 */
export const outputExecutor: NodeExecutor<"OUTPUT"> = {
  async execute(node, rt) {
    const items = forEachItems(node, rt);
    const recipients = validateAllEmails(node, rt, items);
    await assertWithinQuota(node, rt, items.length);
    await recordAllPending(rt.db, ledgerKey(node, rt), recipients);
    return { kind: "batched", batches: Math.ceil(items.length / EMAILS_PER_BATCH) };
  },

  async runBatch(node, rt, batch) {
    const items = forEachItems(node, rt);
    const from = batch * EMAILS_PER_BATCH;
    const to = Math.min(items.length, from + EMAILS_PER_BATCH);
    const emails: RenderedEmail[] = [];
    for (let i = from; i < to; i++) {
      const email = renderEmail(node, rt, items[i], i);
      // Inputs are immutable, so this only happens if data changed under us: refuse rather than send a malformed email.
      if (typeof email === "string") throw new NodeError(`Cannot render the email for item ${i}: ${email}.`);
      emails.push(email);
    }
    const key = ledgerKey(node, rt);
    const alreadySent = await sentIndexes(rt.db, key, from, to);
    const pending = emails.filter((e) => !alreadySent.has(e.itemIndex));
    if (pending.length === 0) return;
    try {
      const results = await sendBatchWithRetry(
        getEmailSender(),
        pending.map((e) => ({
          to: e.to,
          subject: e.subject,
          text: e.text,
          html: e.html,
          kind: "workflow" as const,
          idempotencyKey: `${rt.runId}:${node.id}:${e.itemIndex}`,
        })),
        // Stable across retries and resumes: a batch is marked sent as a whole, so its pending set never changes.
        `${rt.runId}:${node.id}:batch:${batch}:${pending.length}`,
      );
      await markSent(rt.db, key, pending.map((e, k) => ({ itemIndex: e.itemIndex, providerId: results[k].id })));
    } catch (error) {
      if (error instanceof NodeError) await markUnsentFailed(rt.db, key, error.message);
      throw error;
    }
  },

  async complete(node, rt) {
    const items = forEachItems(node, rt);
    const emailsSent = await countSent(rt.db, rt.runId, node.id);
    await rt.log("info", `Sent ${emailsSent} email${emailsSent === 1 ? "" : "s"}`);
    return { kind: "done", output: { emailsSent }, itemsIn: items.length, itemsOut: emailsSent };
  },
};

async function assertWithinQuota(node: NodeOf<"OUTPUT">, rt: NodeRuntime, total: number): Promise<void> {
  const quota = getConfig().emailDailyQuota;
  const { usedToday, alreadyRecorded } = await quotaUsage(rt.db, ledgerKey(node, rt));
  const needed = total - alreadyRecorded;
  if (needed > 0 && usedToday + total > quota) {
    throw new NodeError(
      `The daily email quota of ${quota} would be exceeded: ${usedToday} workflow emails were already sent today and this node needs ${total}. Nothing was sent; try again tomorrow or send to fewer recipients.`,
    );
  }
}
