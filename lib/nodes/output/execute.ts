import "server-only";
import { getConfig } from "@/lib/config";
import { getEmailSender, type EmailSender } from "@/lib/email";
import { NodeError, type NodeExecutor, type NodeOf, type NodeRuntime } from "../types";
import type { LedgerEmail, LedgerKey } from "../ports";
import { forEachItems, outputData, renderAllEmails, renderEmail, unsubscribeHeaders, type RenderedEmail } from "./render-emails";
import { sendBatchWithRetry, SendStopped, type SendContext } from "./send-with-retry";

export const EMAILS_PER_BATCH = 100;

const ledgerKey = (node: NodeOf<"OUTPUT">, rt: NodeRuntime): LedgerKey => ({ runId: rt.ledgerRunId, nodeId: node.id, accountId: rt.accountId });
const fmt = (n: number) => n.toLocaleString("en-US");

/**
 * OUTPUT runs as several durable steps. The first renders every email (refusing all if any is malformed), dedupes the
 * normalised addresses, and records each email in the send ledger as pending, duplicate or suppressed — or, in a
 * preview, as `preview` with its body, and stops there. Then one step per 100 items sends those still pending (paced,
 * retried within the send budget) and moves `progress` on; `complete` counts what the ledger says.
 */
export const outputExecutor: NodeExecutor<"OUTPUT"> = {
  async execute(node, rt) {
    const items = forEachItems(node, rt);
    const emails = await renderAllEmails(node, rt, items);
    const key = ledgerKey(node, rt);
    const preview = rt.mode === "preview";
    await rt.ports.ledger.recordEmails(key, plan(node, emails, preview));
    if (preview) {
      const counts = await rt.ports.ledger.countByStatus(key.runId, node.id);
      return {
        kind: "done",
        output: { emailsSent: 0, emailsPlanned: counts.preview, suppressed: counts.suppressed, duplicates: counts.duplicate },
        itemsIn: items.length,
        itemsOut: 0,
        log: `Preview: ${fmt(counts.preview)} email(s) planned, ${fmt(counts.suppressed)} suppressed, ${fmt(counts.duplicate)} duplicate(s); nothing sent`,
      };
    }
    await assertWithinQuota(rt, key);
    return { kind: "batched", batches: Math.ceil(items.length / EMAILS_PER_BATCH) };
  },

  async runBatch(node, rt, batch) {
    const key = ledgerKey(node, rt);
    const from = batch * EMAILS_PER_BATCH;
    const items = forEachItems(node, rt);
    const to = Math.min(items.length, from + EMAILS_PER_BATCH);
    const { indexes, startedAtMs } = await rt.ports.ledger.pendingInRange(key, rt.runId, from, to);
    if (indexes.length === 0) return;
    const emails: RenderedEmail[] = indexes.sort((a, b) => a - b).map((i) => {
      const email = renderEmail(node, rt, items[i], i);
      // Inputs are immutable, so this only happens if data changed under us: refuse rather than send a malformed email.
      if (typeof email === "string") throw new NodeError(`Cannot render the email for item ${i}: ${email}.`);
      return email;
    });
    const sender = getEmailSender();
    try {
      const results = await sendBatchWithRetry(
        sender,
        emails.map((e) => ({
          to: e.to,
          subject: e.subject,
          text: e.text,
          html: e.html,
          kind: "workflow" as const,
          headers: unsubscribeHeaders(e.unsubscribeUrl),
          idempotencyKey: `${key.runId}:${node.id}:${e.itemIndex}`,
        })),
        // Stable across retries, resumes and the runs of a retry chain: a batch is marked sent as a whole.
        `${key.runId}:${node.id}:batch:${batch}:${emails.length}`,
        sendContext(rt, key, sender, startedAtMs),
      );
      await rt.ports.ledger.markSent(key, rt.runId, emails.map((e, k) => ({ itemIndex: e.itemIndex, providerId: results[k].id })));
    } catch (error) {
      // Cancelled (or handed back) while waiting to send: the batch stays pending; the engine stops the run before
      // the next batch group (a retry of the run, or the process that resumes it, sends it).
      if (error instanceof SendStopped) return "stopped";
      if (error instanceof NodeError) await rt.ports.ledger.markUnsentFailed(key, error.message);
      throw error;
    }
  },

  async complete(node, rt) {
    const key = ledgerKey(node, rt);
    const counts = await rt.ports.ledger.writeProgress(key, rt.runId);
    const itemsIn = counts.pending + counts.sent + counts.suppressed + counts.duplicate + counts.failed + counts.preview;
    return {
      kind: "done",
      output: { emailsSent: counts.sent, suppressed: counts.suppressed, duplicates: counts.duplicate },
      itemsIn,
      itemsOut: counts.sent,
      log: `Sent ${fmt(counts.sent)} email${counts.sent === 1 ? "" : "s"}` + skippedText(counts.suppressed, counts.duplicate),
    };
  },
};

function skippedText(suppressed: number, duplicates: number): string {
  const parts = [suppressed ? `${fmt(suppressed)} suppressed` : "", duplicates ? `${fmt(duplicates)} duplicate(s)` : ""].filter(Boolean);
  return parts.length ? ` (skipped: ${parts.join(", ")})` : "";
}

/** One email per distinct address unless `dedupe: false`; a preview keeps the rendered body. */
function plan(node: NodeOf<"OUTPUT">, emails: RenderedEmail[], preview: boolean): LedgerEmail[] {
  const dedupe = outputData(node).dedupe !== false;
  const seen = new Set<string>();
  return emails.map((e) => {
    const duplicate = dedupe && seen.has(e.to);
    seen.add(e.to);
    const status = duplicate ? "duplicate" : preview ? "preview" : "pending";
    if (!preview) return { itemIndex: e.itemIndex, to: e.to, subject: e.subject, status };
    return { itemIndex: e.itemIndex, to: e.to, subject: e.subject, status, body: e.html ?? e.text ?? "", format: e.html !== undefined ? "html" : "text" };
  });
}

function sendContext(rt: NodeRuntime, key: LedgerKey, sender: EmailSender, startedAtMs: number | null): SendContext {
  const config = getConfig();
  const budgetMinutes = config.emailSendBudgetMinutes;
  const progress = async () => {
    const counts = await rt.ports.ledger.countByStatus(key.runId, key.nodeId);
    // Failed rows are emails this node has not sent (a parallel batch may have marked them already).
    return { sent: counts.sent, total: counts.sent + counts.pending + counts.failed };
  };
  return {
    pacing: rt.ports.pacing,
    ratePerSecond: sender.name === "mailbox" ? (config.mailboxRatePerSecond ?? config.emailRatePerSecond) : config.emailRatePerSecond,
    deadline: (startedAtMs ?? Date.now()) + budgetMinutes * 60_000,
    shouldStop: () => rt.shouldStop(),
    async quotaSentence(quota) {
      const { sent, total } = await progress();
      const provider = sender.name === "resend" ? "Resend" : "The email provider";
      return `${provider}'s ${quota} quota is used up: ${fmt(sent)} of ${fmt(total)} emails were sent. Retry the run after the quota resets; emails already sent will not be sent again.`;
    },
    async budgetSentence(lastError) {
      const { sent, total } = await progress();
      return `The email provider kept failing for ${budgetMinutes} minutes (EMAIL_SEND_BUDGET_MINUTES; last answer: ${lastError}): ${fmt(sent)} of ${fmt(total)} emails were sent. Retry the run later; emails already sent will not be sent again.`;
    },
  };
}

/** Flowmail's own EMAIL_DAILY_QUOTA, checked before the first email so a node never stops half-way for it; sets progress. */
async function assertWithinQuota(rt: NodeRuntime, key: LedgerKey): Promise<void> {
  const quota = getConfig().emailDailyQuota;
  const { usedToday, thisNode } = await rt.ports.ledger.beginSending(key, rt.runId);
  if (thisNode > 0 && usedToday + thisNode > quota) {
    const message =
      `Flowmail's daily email quota (EMAIL_DAILY_QUOTA, ${fmt(quota)}) is used up: ${fmt(usedToday)} workflow emails were already sent today and this node has ${fmt(thisNode)} to send, so none of them was sent. ` +
      "Retry the run after the quota resets (midnight UTC) or send to fewer recipients; emails already sent will not be sent again.";
    await rt.ports.ledger.markUnsentFailed(key, message);
    throw new NodeError(message);
  }
}
