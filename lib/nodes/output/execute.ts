import "server-only";
import { getConfig } from "@/lib/config";
import { getEmailSender, type EmailSender } from "@/lib/email";
import { NodeError, type NodeExecutor, type NodeOf, type NodeRuntime } from "../types";
import type { LedgerEmail, LedgerKey, StatusCounts } from "../ports";
import { forEachItems, outputData, renderAllEmails, renderEmail, unsubscribeHeaders, type RenderedEmail } from "./render-emails";
import { sendBatchWithRetry, SendStopped, type SendContext } from "./send-with-retry";

export const EMAILS_PER_BATCH = 100;

const ledgerKey = (node: NodeOf<"OUTPUT">, rt: NodeRuntime): LedgerKey => ({ runId: rt.ledgerRunId, nodeId: node.id, accountId: rt.accountId });
const fmt = (n: number) => n.toLocaleString("en-US");

/**
 * What a step of the node read with its own statement for the next step, when that step runs in this process with the
 * same runtime (the embedded executor; under Inngest a step may run elsewhere and reads again): the first batch's
 * pending emails and send slot (read with the ledger rows), and a single-batch node's counts (read with its markSent).
 * Used once, and only within STASH_MS.
 */
const firstBatches = new WeakMap<NodeRuntime, { indexes: number[]; startedAtMs: number | null; slotAt?: number; at: number }>();
const lastCounts = new WeakMap<NodeRuntime, { counts: StatusCounts; at: number }>();
const STASH_MS = 2_000;

function take<T extends { at: number }>(stash: WeakMap<NodeRuntime, T>, rt: NodeRuntime): T | undefined {
  const value = stash.get(rt);
  stash.delete(rt);
  return value && Date.now() - value.at <= STASH_MS ? value : undefined;
}

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
    if (!preview) {
      await beginSending(rt, key, items.length, plan(node, emails, preview));
      return { kind: "batched", batches: Math.ceil(items.length / EMAILS_PER_BATCH) };
    }
    await rt.ports.ledger.recordEmails(key, plan(node, emails, preview));
    const counts = await rt.ports.ledger.countByStatus(key.runId, node.id);
    return {
      kind: "done",
      output: { emailsSent: 0, emailsPlanned: counts.preview, suppressed: counts.suppressed, duplicates: counts.duplicate },
      itemsIn: items.length,
      itemsOut: 0,
      log: `Preview: ${fmt(counts.preview)} email(s) planned, ${fmt(counts.suppressed)} suppressed, ${fmt(counts.duplicate)} duplicate(s); nothing sent`,
    };
  },

  async runBatch(node, rt, batch) {
    const key = ledgerKey(node, rt);
    const from = batch * EMAILS_PER_BATCH;
    const items = forEachItems(node, rt);
    const to = Math.min(items.length, from + EMAILS_PER_BATCH);
    const first = batch === 0 ? take(firstBatches, rt) : undefined;
    const { indexes, startedAtMs } = first ?? (await rt.ports.ledger.pendingInRange(key, rt.runId, from, to));
    if (indexes.length === 0) return;
    const emails: RenderedEmail[] = indexes.sort((a, b) => a - b).map((i) => {
      const email = renderEmail(node, rt, items[i], i);
      // Inputs are immutable, so this only happens if data changed under us: refuse rather than send a malformed email.
      if (typeof email === "string") throw new NodeError(`Cannot render the email for item ${i}: ${email}.`);
      return email;
    });
    const sender = getEmailSender();
    const last = items.length <= EMAILS_PER_BATCH; // the node's only batch: complete() follows
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
        sendContext(rt, key, sender, startedAtMs, first?.slotAt),
      );
      const sent = emails.map((e, k) => ({ itemIndex: e.itemIndex, providerId: results[k].id }));
      if (last && rt.ports.ledger.markSentAndCount) lastCounts.set(rt, { counts: await rt.ports.ledger.markSentAndCount(key, rt.runId, sent), at: Date.now() });
      else await rt.ports.ledger.markSent(key, rt.runId, sent);
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
    const counts = take(lastCounts, rt)?.counts ?? (await rt.ports.ledger.writeProgress(key, rt.runId));
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

/** Provider calls per second for the sender (EMAIL_RATE_PER_SECOND; MAILBOX_RATE_PER_SECOND for the local mailbox). */
function ratePerSecond(sender: EmailSender): number {
  const config = getConfig();
  return sender.name === "mailbox" ? (config.mailboxRatePerSecond ?? config.emailRatePerSecond) : config.emailRatePerSecond;
}

function sendContext(rt: NodeRuntime, key: LedgerKey, sender: EmailSender, startedAtMs: number | null, firstSlotAt?: number): SendContext {
  const config = getConfig();
  const budgetMinutes = config.emailSendBudgetMinutes;
  const progress = async () => {
    const counts = await rt.ports.ledger.countByStatus(key.runId, key.nodeId);
    // Failed rows are emails this node has not sent (a parallel batch may have marked them already).
    return { sent: counts.sent, total: counts.sent + counts.pending + counts.failed };
  };
  return {
    pacing: rt.ports.pacing,
    ratePerSecond: ratePerSecond(sender),
    firstSlotAt,
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

/**
 * Records the node's emails in the send ledger (before any provider call) and checks Flowmail's own EMAIL_DAILY_QUOTA
 * before the first email, so a node never stops half-way for it; sets progress. One round trip when the ledger port
 * can (recordAndBegin), which also reads the first batch's pending emails and takes its send slot for runBatch.
 */
async function beginSending(rt: NodeRuntime, key: LedgerKey, items: number, emails: LedgerEmail[]): Promise<void> {
  const quota = getConfig().emailDailyQuota;
  const { ledger } = rt.ports;
  let begun: { usedToday: number; thisNode: number; first?: { indexes: number[]; startedAtMs: number | null }; slotWaitMs?: number };
  if (ledger.recordAndBegin) {
    const sender = getEmailSender();
    const firstTo = Math.min(items, EMAILS_PER_BATCH);
    const slot = sender.pacingKey ? { key: sender.pacingKey, ratePerSecond: ratePerSecond(sender) } : undefined;
    begun = await ledger.recordAndBegin(key, rt.runId, emails, { firstTo, quota, slot });
    const at = Date.now();
    // The slot starts slotWaitMs after the statement (as acquireSendSlot waits after takeSlot).
    if (begun.first) firstBatches.set(rt, { ...begun.first, slotAt: begun.slotWaitMs !== undefined ? at + begun.slotWaitMs : undefined, at });
  } else {
    await ledger.recordEmails(key, emails);
    begun = await ledger.beginSending(key, rt.runId);
  }
  const { usedToday, thisNode } = begun;
  if (thisNode > 0 && usedToday + thisNode > quota) {
    firstBatches.delete(rt);
    const message =
      `Flowmail's daily email quota (EMAIL_DAILY_QUOTA, ${fmt(quota)}) is used up: ${fmt(usedToday)} workflow emails were already sent today and this node has ${fmt(thisNode)} to send, so none of them was sent. ` +
      "Retry the run after the quota resets (midnight UTC) or send to fewer recipients; emails already sent will not be sent again.";
    await rt.ports.ledger.markUnsentFailed(key, message);
    throw new NodeError(message);
  }
}
