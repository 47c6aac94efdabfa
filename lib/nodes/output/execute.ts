import "server-only";
import type { EmailSender } from "@/lib/email/types";
import { unsubscribeUrl } from "@/lib/email/unsubscribe-token";
import { sliceClock } from "@/lib/slices";
import { NodeError, type NodeExecutor, type NodeOf, type NodeRuntime } from "../types";
import type { LedgerEmail, LedgerKey, ResolvedSender, StatusCounts } from "../ports";
import { emailRenderer, forEachItems, outputData, renderAllEmails, unsubscribeHeaders, type RenderedEmail } from "./render-emails";
import { sendBatchWithRetry, SendStopped, type SendContext } from "./send-with-retry";
import { resendShared, SharedBudgetSpent, sendShared } from "./shared-send";
import { sendEach } from "./send-each";
import { plainTextOf } from "./markdown";
import { senderOf } from "./sender-of";

const EMAILS_PER_BATCH = 100;

const ledgerKey = (node: NodeOf<"OUTPUT">, rt: NodeRuntime): LedgerKey => ({
  chainRunId: rt.ledgerRunId,
  nodeId: node.id,
  accountId: rt.accountId,
  // A resend-unknown run sends exactly the emails of unknown fate: refused (failed) ones stay as they are.
  ...(rt.trigger === "resend_unknown" ? { reopen: "unknown" as const } : {}),
});
/**
 * 12345 → "12,345", as toLocaleString("en-US") writes it, without ICU: a process's first toLocaleString loads ICU's
 * number data (~20 ms on the main thread, in the first run's OUTPUT node).
 */
export const fmt = (n: number) => (Number.isInteger(n) ? String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",") : n.toLocaleString("en-US"));

/**
 * What a step of the node read with its own statement for the next step, when that step runs in this process with the
 * same runtime (the embedded executor; under Inngest a step may run elsewhere and reads again): the first batch's
 * pending emails and send slot (read with the ledger rows), and a single-batch node's counts (read with its markSent).
 * Used once, and only within STASH_MS.
 */
type FirstBatch = { indexes: number[]; startedAtMs: number | null; slotAt?: number; inflight?: string[]; fresh?: boolean; at: number };
const firstBatches = new WeakMap<NodeRuntime, FirstBatch>();
const lastCounts = new WeakMap<NodeRuntime, { counts: StatusCounts; at: number }>();
const STASH_MS = 2_000;

/**
 * The emails the first step rendered (all of them, to refuse a malformed one before any is sent), for the node's
 * batches when they run in this process with the same runtime: each batch takes its own (and lets them go) instead of
 * rendering them again. Their unsubscribe address (an HMAC per email) is left to the send. Elsewhere (Inngest) a
 * batch renders its emails.
 */
const renderedEmails = new WeakMap<NodeRuntime, (RenderedEmail | undefined)[]>();

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
    const emails = await renderAllEmails(node, rt, items, { headerUrl: false });
    const key = ledgerKey(node, rt);
    const preview = rt.mode === "preview";
    if (!preview) {
      // Bodies past the node's memory budget were not kept: their batches render them again.
      renderedEmails.set(rt, emails.map((e) => (e.bodyDropped ? undefined : e)));
      try {
        await beginSending(node, rt, key, items.length, await plan(node, emails, preview));
      } catch (error) {
        renderedEmails.delete(rt);
        throw error;
      }
      return { kind: "batched", batches: Math.ceil(items.length / EMAILS_PER_BATCH) };
    }
    await rt.ports.ledger.recordEmails(key, await plan(node, emails, preview));
    const counts = await rt.ports.ledger.countByStatus(key.chainRunId, node.id);
    return {
      kind: "done",
      output: { emailsSent: 0, emailsPlanned: counts.preview, suppressed: counts.suppressed, duplicates: counts.duplicate },
      itemsIn: items.length,
      itemsOut: 0,
      log: `Preview: ${fmt(counts.preview)} email(s) planned, ${fmt(counts.suppressed)} suppressed, ${fmt(counts.duplicate)} duplicate(s); nothing sent`,
    };
  },

  async runBatch(node, rt, batch) {
    return sendRange(node, rt, batch, { first: batch === 0 ? take(firstBatches, rt) : undefined, markFailed: true });
  },

  async settleFailure(node, rt, sentence) {
    if (!SENT_PHRASE.test(sentence)) return sentence;
    const key = ledgerKey(node, rt);
    return sentence.replace(SENT_PHRASE, sentPhrase(await rt.ports.ledger.countByStatus(key.chainRunId, key.nodeId)));
  },

  async complete(node, rt) {
    const key = ledgerKey(node, rt);
    const counts = take(lastCounts, rt)?.counts ?? (await rt.ports.ledger.writeProgress(key, rt.runId));
    const itemsIn = counts.pending + counts.sent + counts.suppressed + counts.duplicate + counts.failed + counts.preview + counts.sending + counts.unknown;
    // Refused and unknown emails (SMTP, SES) are named when there are any, so a plain node's output keeps its shape.
    const uncertain = { ...(counts.failed > 0 ? { failed: counts.failed } : {}), ...(counts.unknown > 0 ? { unknown: counts.unknown } : {}) };
    return {
      kind: "done",
      output: { emailsSent: counts.sent, suppressed: counts.suppressed, duplicates: counts.duplicate, ...uncertain },
      itemsIn,
      itemsOut: counts.sent,
      log: `Sent ${fmt(counts.sent)} email${counts.sent === 1 ? "" : "s"}` + skippedText(counts.suppressed, counts.duplicate) + uncertainText(counts.failed, counts.unknown),
    };
  },
};

/**
 * Sends the pending emails of batch `batch` (items [batch × 100, +100)): reads them (and takes the send slot) in one
 * round trip unless `first` has them, sends them paced and retried, marks them sent. `markFailed`: a node failure marks
 * the node's unsent emails failed here (not while the node still records its emails: its first step does it after).
 */
async function sendRange(
  node: NodeOf<"OUTPUT">,
  rt: NodeRuntime,
  batch: number,
  options: { first?: FirstBatch; markFailed: boolean; alone?: boolean },
): Promise<"stopped" | void> {
  const key = ledgerKey(node, rt);
  const from = batch * EMAILS_PER_BATCH;
  const items = forEachItems(node, rt);
  const to = Math.min(items.length, from + EMAILS_PER_BATCH);
  const resolved = await senderOf(node, rt);
  const { sender } = resolved;
  const last = items.length <= EMAILS_PER_BATCH; // the node's only batch: complete() follows
  const { first } = options;
  // SMTP, SES: emails an earlier attempt left `sending` (a crash while their calls were under way) become `unknown`.
  // Not for a first batch whose rows this execution has just inserted: no attempt before it could have begun them.
  if (sender.perEmail && !first?.fresh) {
    const unknown = await rt.ports.ledger.each!.settleUnknown(key, from, to);
    if (unknown > 0) await rt.log("warn", `${fmt(unknown)} email(s) were being sent when the run stopped: their delivery is unknown, and they are not sent again (resend them from the run's recipients if needed)`);
  }
  // The only batch of a small node shares its provider call with other runs' (shared-send.ts) — on its first attempt
  // only (its rows were inserted by this execution's recordAndBegin): an earlier attempt may have sent it alone under
  // its own key, and only that key must go to the provider again.
  const shared = sharesCall(items.length, rt.ports.ledger, sender) && !options.alone && first?.fresh ? rt.ports.ledger.shared : undefined;
  let read: { indexes: number[]; startedAtMs: number | null; slotAt?: number; inflight?: string[] } | undefined = first;
  if (!read) {
    const pending = await rt.ports.ledger.pendingInRange(key, rt.runId, from, to, slotOf(resolved));
    read = { ...pending, slotAt: pending.slotWaitMs !== undefined ? Date.now() + pending.slotWaitMs : undefined };
  }
  if (read.indexes.length === 0 && !read.inflight?.length) return;
  const rendered = renderedEmails.get(rt);
  const transactional = outputData(node).unsubscribe === false;
  let render: ReturnType<typeof emailRenderer> | undefined; // made once, for a batch whose emails were not kept
  const emails: RenderedEmail[] = read.indexes.sort((a, b) => a - b).map((i) => {
    let email = rendered?.[i];
    if (email) rendered![i] = undefined;
    else {
      const again = (render ??= emailRenderer(node, rt))(items[i], i);
      // Inputs are immutable, so this only happens if data changed under us: refuse rather than send a malformed email.
      if (typeof again === "string") throw new NodeError(`Cannot render the email for item ${i}: ${again}.`);
      email = again;
    }
    if (!transactional && email.unsubscribeUrl === undefined) email.unsubscribeUrl = unsubscribeUrl(rt.accountId, email.to, rt.emailIdentity?.appUrl);
    return email;
  });
  const context = (slotAt?: number) => sendContext(rt, key, resolved, read.startedAtMs, slotAt);
  let missing: number[] = [];
  try {
    // A shared call of an earlier attempt (a resume, a retry): sent again whole, under its key.
    for (const sendKey of read.inflight ?? []) {
      if (!rt.ports.ledger.shared) throw new Error("a shared provider call is pending, but the ledger port cannot send it");
      await resendShared(sender, rt.ports.ledger.shared, sendKey, context());
    }
    if (emails.length === 0) return;
    const outgoing = emails.map((e) => ({
      to: e.to,
      subject: e.subject,
      // Every HTML (or Markdown) email also carries a plain-text part, made from its HTML at send time.
      text: e.text ?? (e.html !== undefined ? plainTextOf(e.html) : undefined),
      html: e.html,
      kind: "workflow" as const,
      // Through the deployment's transport, the run's EMAIL_FROM, not this instance's: a resumed batch must be byte for
      // byte the one first sent. An account's own sender always sends from its own address.
      ...(rt.emailIdentity && resolved.senderId === undefined ? { from: rt.emailIdentity.from } : {}),
      headers: unsubscribeHeaders(e.unsubscribeUrl),
      idempotencyKey: `${key.chainRunId}:${node.id}:${e.itemIndex}`,
      ...(e.replyTo ? { replyTo: e.replyTo } : {}),
    }));
    if (sender.perEmail) {
      const done = await sendEach(resolved, rt, key, outgoing.map((email, k) => ({ itemIndex: emails[k].itemIndex, email })), context());
      if (done === "stopped") return "stopped";
      return;
    }
    let slotAt = read.slotAt;
    let sentShared = false;
    if (shared) {
      const outcome = await sendShared(sender, {
        ledger: { ...rt.ports.ledger, shared },
        pacing: rt.ports.pacing,
        key,
        emails: outgoing,
        itemIndexes: emails.map((e) => e.itemIndex),
        ctx: context(),
        slotAt,
        execRunId: rt.runId,
      });
      if (outcome.kind === "shared") {
        // The call marked its rows sent (and counted this node's ledger when every row of the batch was in it).
        if (outcome.counts) lastCounts.set(rt, { counts: outcome.counts, at: Date.now() });
        missing = outcome.missing;
      } else slotAt = outcome.slotTaken ? Date.now() : undefined; // a refused call used this batch's slot
      sentShared = outcome.kind === "shared";
    }
    if (!sentShared) {
      const results = await sendBatchWithRetry(
        sender,
        outgoing,
        // Stable across retries, resumes and the runs of a retry chain: a batch is marked sent as a whole.
        `${key.chainRunId}:${node.id}:batch:${batch}:${emails.length}`,
        context(slotAt),
      );
      const sent = emails.map((e, k) => ({ itemIndex: e.itemIndex, providerId: results[k].id }));
      if (last && rt.ports.ledger.markSentAndCount) {
        lastCounts.set(rt, { counts: await rt.ports.ledger.markSentAndCount(key, rt.runId, sent), at: Date.now() });
      } else await rt.ports.ledger.markSent(key, rt.runId, sent);
    }
  } catch (caught) {
    let error = caught;
    // A shared call's budget ran out: this run fails with its own sentence (what it has sent of what).
    if (error instanceof SharedBudgetSpent) error = new NodeError(await context().budgetSentence(error.lastError), { cause: error });
    // Cancelled (or handed back) while waiting to send: the batch stays pending; the engine stops the run before
    // the next batch group (a retry of the run, or the process that resumes it, sends it).
    if (error instanceof SendStopped) return "stopped";
    if (error instanceof NodeError && options.markFailed) await rt.ports.ledger.markUnsentFailed(key, error.message);
    throw error;
  }
  // Rows the shared call could not take (no longer pending, or in another call): read again, and sent alone.
  if (missing.length > 0) return sendRange(node, rt, batch, { markFailed: options.markFailed, alone: true });
}

/**
 * Whether a node of `items` items sends its batch in a shared provider call (on a first attempt: sendRange): its only
 * batch, with a ledger that shares calls. beginSending takes no send slot for such a batch; the call takes one.
 */
function sharesCall(items: number, ledger: NodeRuntime["ports"]["ledger"], sender: EmailSender): boolean {
  return items <= EMAILS_PER_BATCH && ledger.shared !== undefined && !sender.perEmail;
}

/** The sender's shared limiter and rate, for a transport paced per call (Resend); SMTP and SES pace each email. */
function slotOf(resolved: ResolvedSender): { key: string; ratePerSecond: number } | undefined {
  const { sender } = resolved;
  return sender.pacingKey && !sender.perEmail ? { key: sender.pacingKey, ratePerSecond: resolved.ratePerSecond } : undefined;
}

function uncertainText(failed: number, unknown: number): string {
  const parts = [failed ? `${fmt(failed)} refused by the provider` : "", unknown ? `${fmt(unknown)} of unknown fate (not sent again)` : ""].filter(Boolean);
  return parts.length ? `; ${parts.join(", ")}` : "";
}

function skippedText(suppressed: number, duplicates: number): string {
  const parts = [suppressed ? `${fmt(suppressed)} suppressed` : "", duplicates ? `${fmt(duplicates)} duplicate(s)` : ""].filter(Boolean);
  return parts.length ? ` (skipped: ${parts.join(", ")})` : "";
}

/** One email per distinct address unless `dedupe: false`; a preview keeps the rendered body. */
async function plan(node: NodeOf<"OUTPUT">, emails: RenderedEmail[], preview: boolean): Promise<LedgerEmail[]> {
  const dedupe = outputData(node).dedupe !== false;
  const seen = new Set<string>();
  const planned: LedgerEmail[] = [];
  // 40,000 emails took ~35 ms in one piece on the server's main thread: sliced (lib/slices.ts).
  const clock = sliceClock();
  for (const e of emails) {
    if (clock.due()) await clock.yield();
    const duplicate = dedupe && seen.has(e.to);
    seen.add(e.to);
    const status = duplicate ? "duplicate" : preview ? "preview" : "pending";
    if (!preview) planned.push({ itemIndex: e.itemIndex, to: e.to, subject: e.subject, status });
    else planned.push({ itemIndex: e.itemIndex, to: e.to, subject: e.subject, status, body: e.html ?? e.text ?? "", format: e.html !== undefined ? "html" : "text" });
  }
  return planned;
}

/** "N of M emails were sent": failed rows are emails this node has not sent (a parallel batch may have marked them). */
function sentPhrase(counts: { sent: number; pending: number; failed: number; sending: number }): string {
  return `${fmt(counts.sent)} of ${fmt(counts.sent + counts.pending + counts.failed + counts.sending)} emails were sent`;
}
const SENT_PHRASE = /[\d,.]+ of [\d,.]+ emails were sent/;

function sendContext(rt: NodeRuntime, key: LedgerKey, resolved: ResolvedSender, startedAtMs: number | null, firstSlotAt?: number): SendContext {
  const budgetMinutes = rt.ports.sendLimits.budgetMinutes;
  const progress = async () => sentPhrase(await rt.ports.ledger.countByStatus(key.chainRunId, key.nodeId));
  return {
    pacing: rt.ports.pacing,
    ratePerSecond: resolved.ratePerSecond,
    firstSlotAt,
    deadline: (startedAtMs ?? Date.now()) + budgetMinutes * 60_000,
    shouldStop: () => rt.shouldStop(),
    async quotaSentence(quota) {
      return `${resolved.label}'s ${quota} quota is used up: ${await progress()}. Retry the run after the quota resets; emails already sent will not be sent again.`;
    },
    async budgetSentence(lastError) {
      return `The email provider kept failing for ${budgetMinutes} minutes (EMAIL_SEND_BUDGET_MINUTES; last answer: ${lastError}): ${await progress()}. Retry the run later; emails already sent will not be sent again.`;
    },
  };
}

/**
 * Records the node's emails in the send ledger (before any provider call) and checks Flowmail's own EMAIL_DAILY_QUOTA
 * before the first email, so a node never stops half-way for it; sets progress. One round trip when the ledger port
 * can (recordAndBegin), which also reads the first batch's pending emails and takes its send slot for runBatch. A node
 * of more than `sendLimits.ledgerChunk` emails records that many this way; then, when the quota surely allows every email (today's
 * count plus all the node's emails, suppressed and already sent ones included), it sends its first batches while the
 * rest are recorded (recordWhileSending); otherwise it records the rest and checks the exact count first.
 */
async function beginSending(node: NodeOf<"OUTPUT">, rt: NodeRuntime, key: LedgerKey, items: number, emails: LedgerEmail[]): Promise<void> {
  const quota = rt.ports.sendLimits.dailyQuota;
  const { ledger } = rt.ports;
  const resolved = await senderOf(node, rt);
  if (!ledger.recordAndBegin) {
    await ledger.recordEmails(key, emails);
    return checkQuota(rt, key, quota, await ledger.beginSending(key, rt.runId));
  }
  const planned = emails.reduce((n, e) => n + (e.status === "pending" ? 1 : 0), 0);
  const chunk = rt.ports.sendLimits.ledgerChunk;
  // A bigger node records its first batch's rows here and the rest while that batch is sent: a short first statement
  // (1,000 rows took ~60 ms on PGlite, and every request's statement waited for it) and an earlier first email.
  const head = emails.length > chunk ? emails.slice(0, EMAILS_PER_BATCH) : emails;
  // The only batch of a small node goes in a shared provider call (shared-send.ts), which takes one send slot for the
  // whole call, on the run-state pool: a slot taken here would be one per run, mostly unused (a call of 8 runs' batches
  // used one of their 8 slots, and the provider's limit let through an eighth of the calls it allows), and taken
  // in this durable statement it held the limiter's one row until the commit's WAL flush, so every run's statement
  // waited for the previous one's flush (pg_stat_statements, bench/tiny-exec: 8.5 ms per statement).
  const begun = await ledger.recordAndBegin(key, rt.runId, head, {
    firstTo: Math.min(items, EMAILS_PER_BATCH),
    quota,
    slot: sharesCall(items, ledger, resolved.sender) ? undefined : slotOf(resolved),
    progressTotal: head === emails ? undefined : planned,
  });
  const at = Date.now();
  // The slot starts slotWaitMs after the statement (as acquireSendSlot waits after takeSlot).
  const first = begun.first && { ...begun.first, slotAt: begun.slotWaitMs !== undefined ? at + begun.slotWaitMs : undefined, at };
  if (head !== emails && begun.usedToday + planned <= quota) return recordWhileSending(node, rt, key, emails, head.length, first);
  if (head !== emails) {
    // Perhaps over the quota: the exact count (suppressed addresses and emails sent by an earlier run of the chain do
    // not count) needs every row before any email leaves.
    await ledger.recordEmails(key, emails.slice(head.length), { reopen: false });
    await checkQuota(rt, key, quota, await ledger.beginSending(key, rt.runId));
  } else {
    await checkQuota(rt, key, quota, begun);
  }
  if (first) firstBatches.set(rt, first);
}

async function checkQuota(rt: NodeRuntime, key: LedgerKey, quota: number, { usedToday, thisNode }: { usedToday: number; thisNode: number }): Promise<void> {
  if (thisNode === 0 || usedToday + thisNode <= quota) return;
  const message =
    `Flowmail's daily email quota (EMAIL_DAILY_QUOTA, ${fmt(quota)}) is used up: ${fmt(usedToday)} workflow emails were already sent today and this node has ${fmt(thisNode)} to send, so none of them was sent. ` +
    "Retry the run after the quota resets (midnight UTC) or send to fewer recipients; emails already sent will not be sent again.";
  await rt.ports.ledger.markUnsentFailed(key, message);
  throw new NodeError(message);
}

/**
 * Records the node's emails after the first `headLength` (one statement per `sendLimits.ledgerChunk`, two in flight) while its
 * first batches are sent one at a time, as far as the rows recorded so far reach; then writes the node's progress
 * from its counts. Returns once every row is recorded and no batch of it is being sent: the engine's batch steps send
 * the rest (a batch sent here finds nothing pending there), so a resume after this step always finds every row. A
 * failure of either side is thrown once both have stopped; a send failure marks the unsent emails failed after that.
 */
async function recordWhileSending(
  node: NodeOf<"OUTPUT">,
  rt: NodeRuntime,
  key: LedgerKey,
  emails: LedgerEmail[],
  headLength: number,
  first?: FirstBatch,
): Promise<void> {
  const { ledger } = rt.ports;
  // Through a sender paced per email (SMTP, SES), which cannot outrun the recording: one statement in flight, of one
  // batch's rows, so that each of the sends' statements waits for one short insert at most on PGlite's one connection
  // (with two of 500 rows in flight, the first of 5,000 emails went only after the whole recording, ~0.4 s later).
  const perEmail = (await senderOf(node, rt)).sender.perEmail === true;
  const chunk = perEmail ? Math.min(EMAILS_PER_BATCH, rt.ports.sendLimits.ledgerChunk) : rt.ports.sendLimits.ledgerChunk;
  // Range c of the emails: [starts[c], starts[c + 1]); range 0 (the head) is recorded already.
  const starts = [0];
  for (let at = headLength; at < emails.length; at += chunk) starts.push(at);
  starts.push(emails.length);
  const chunks = starts.length - 1;
  const recorded = Array.from({ length: chunks }, (_, c) => c === 0);
  let recordedUpTo = headLength; // every item below has its row
  let next = 1;
  let recording = true;
  let failed = false;
  let firstUsed = false;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  const recorder = async () => {
    while (next < chunks && !failed) {
      const c = next++;
      try {
        await ledger.recordEmails(key, emails.slice(starts[c], starts[c + 1]), { reopen: false });
      } catch (error) {
        failed = true;
        throw error;
      }
      recorded[c] = true;
      let upTo = 0;
      while (upTo < chunks && recorded[upTo]) upTo++;
      recordedUpTo = starts[upTo];
      notify();
    }
  };
  const recorders = perEmail ? [recorder()] : [recorder(), recorder()];
  const recording$ = Promise.allSettled(recorders).finally(() => {
    recording = false;
    notify();
  });
  const sending$ = (async () => {
    for (let batch = 0; ; batch++) {
      const to = Math.min(emails.length, (batch + 1) * EMAILS_PER_BATCH);
      while (recording && recordedUpTo < to) await new Promise<void>((resolve) => (wake = resolve));
      if (!recording || failed || (batch > 0 && (await rt.shouldStop()))) return;
      if (batch === 0) firstUsed = true;
      const sent = await sendRange(node, rt, batch, { first: batch === 0 ? first : undefined, markFailed: false }).catch((error: unknown) => {
        failed = true;
        throw error;
      });
      if (sent === "stopped") return;
    }
  })();
  const [records, sends] = await Promise.allSettled([recording$, sending$]);
  const recordError = records.status === "fulfilled" ? records.value.find((r) => r.status === "rejected") : records;
  if (sends.status === "rejected") {
    if (sends.reason instanceof NodeError) await ledger.markUnsentFailed(key, sends.reason.message);
    throw sends.reason;
  }
  if (recordError) throw (recordError as PromiseRejectedResult).reason;
  await ledger.writeProgress(key, rt.runId);
  // Every row was in before the first batch could go: its pending emails and slot are still good for runBatch.
  if (first && !firstUsed) firstBatches.set(rt, first);
}
