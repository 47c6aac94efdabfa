import "server-only";
import { waitUnlessStopped } from "@/lib/email/pacing";
import type { EmailSender, OutgoingEmail, SendResult } from "@/lib/email/types";
import { randomUUID } from "node:crypto";
import type { LedgerKey, SendLedger, SendPacing, SharedRow, SharedRowRef, SharedSends, StatusCounts } from "../ports";
import { NodeError } from "../types";
import { sendBatchWithRetry, SendStopped, type SendContext } from "./send-with-retry";

/** A provider call holds at most this many emails (Resend's batch API). */
const SHARED_CALL_LIMIT = 100;

/**
 * Shared provider calls. A small OUTPUT node's only batch (at most 100 emails: a welcome email per
 * signup, a report to a few people) used to be a provider call of its own, ~1 ms of CPU of the ~3.5 ms a tiny run cost
 * the executor (the Resend SDK's fetch, its streams and socket). Here the batches that are ready in the same turn of the
 * event loop, those that come while `gathering.callsInFlight` calls are under way (for at most `maxWaitMs`), and those that come while
 * the call waits for its send slot, go in one call of up to 100 emails.
 *
 * Exactly-once: before the call one statement gives every row in it the call's idempotency key and the email exactly
 * as it goes (`claim`, migration 0013); only rows still pending and in no other call go. A resume of any of the runs,
 * in any process, finds those rows pending with that key (`inflight`) and sends the whole call again under it
 * (`resendShared`): the provider answers a repeated key from its cache (the mailbox by each email's own key), so an
 * email goes out once whether the first call reached the provider or not. After the call one statement marks every row
 * of it sent and writes each run's node progress, answering each run its node's counts (markSentAndCount of the
 * SharedSends port: one round trip for the call instead of one per run); a resume marks whatever the call still has
 * pending.
 *
 * A call the provider refuses outright (a refused address, a quota: nothing of it was sent) is released — its rows
 * leave it — and each run sends its own emails alone, so one run's bad address never fails another run. A call whose
 * send budget runs out (429 and 5xx until EMAIL_SEND_BUDGET_MINUTES) fails each of its runs with its own sentence; its
 * rows keep the key, and a retry of any of those runs sends the same call again. A cancel or a hand-back while the call
 * waits for its slot takes that run out of the call; once claimed, a call stops only when all of its runs stop.
 */

export type SharedPart = {
  ledger: SendLedger & { shared: SharedSends };
  pacing: SendPacing;
  key: LedgerKey;
  /** The batch's emails (each with its own idempotency key) and their items. */
  emails: OutgoingEmail[];
  itemIndexes: number[];
  ctx: SendContext;
  /** A send slot this batch took already (epoch ms when it starts), read with its rows in the same statement. */
  slotAt?: number;
  /**
   * The run executing the node: when the whole batch goes in the call, the node's progress in that run is written with
   * the marking, and its counts answered (`counts`).
   */
  execRunId?: string;
};

/**
 * `shared`: the call went and its rows are marked sent; provider ids by item for the rows that were in it (`missing`:
 * items that could not be claimed — no longer pending, or in another call — to be read again), and, when none is
 * missing and the part named its `execRunId`, the node's ledger counts after the marking. `alone`: send the batch as
 * its own call (nobody to share with, or the shared call was refused and released); `slotTaken` when a send slot was
 * taken for it.
 */
export type SharedOutcome =
  | { kind: "shared"; ids: Map<number, string>; missing: number[]; counts?: StatusCounts }
  | { kind: "alone"; slotTaken: boolean };

/** The call's send budget ran out: each run fails with its own sentence (ctx.budgetSentence). */
export class SharedBudgetSpent extends Error {
  constructor(readonly lastError: string) {
    super(`the shared provider call kept failing: ${lastError}`);
  }
}

type Waiting = SharedPart & { resolve: (o: SharedOutcome) => void; reject: (e: unknown) => void };
type Group = { parts: Waiting[]; emails: number; launched: boolean };

/** The call being formed for each sender: batches join it until it has its send slot (or 100 emails). */
const forming = new WeakMap<EmailSender, Group>();
/**
 * Calls of each sender under way: from launch (the wait for a send slot included) to the marking. A group of one batch
 * leaves when it has its slot: that batch then goes alone.
 */
const inFlight = new WeakMap<EmailSender, number>();
/** Formed calls waiting for one of those to end, oldest first. */
const queued = new WeakMap<EmailSender, Group[]>();

/**
 * How calls gather (tests change it). `callsInFlight`: how many calls of a sender may be under way (`inFlight`) before
 * a new call waits to gather batches. A call launches at the end of the turn its first batch came in when fewer are
 * (calls launched in one turn, or by their timer, may make more); otherwise it
 * gathers the batches that become ready until one of them ends, so under load a call holds what became ready during
 * one call's round trip, and on a quiet server nothing waits. `maxWaitMs`: the longest a call waits so: a call in
 * flight may take long (a slow provider, retries within the send budget), and the runs in the next call must not
 * wait for it, nor a cancel for them. Until 2026-11-27 a busy process's call always gathered for 20 ms: in
 * bench/tiny-runs (PostgreSQL, 20 workflows, whose runs each wait for their workflow's previous run) that wait was half
 * of a run's time once the enqueues were done (~460 runs/s); with this, 580–700 runs/s at 0.12–0.14 provider calls per
 * run instead of 0.05 (bench/README.md, 2026-11-27 midday).
 */
export const gathering = { callsInFlight: 2, maxWaitMs: 20 };

/** Puts the batch in the call being formed for `sender` (or a new one). */
export function sendShared(sender: EmailSender, part: SharedPart): Promise<SharedOutcome> {
  return new Promise((resolve, reject) => {
    let group = forming.get(sender);
    if (!group || group.emails + part.emails.length > SHARED_CALL_LIMIT) {
      const fresh: Group = { parts: [], emails: 0, launched: false };
      forming.set(sender, fresh);
      if ((inFlight.get(sender) ?? 0) < gathering.callsInFlight) setImmediate(() => start(sender, fresh));
      else {
        const waiting = queued.get(sender) ?? [];
        waiting.push(fresh);
        queued.set(sender, waiting);
        setTimeout(() => start(sender, fresh), gathering.maxWaitMs);
      }
      group = fresh;
    }
    group.parts.push({ ...part, resolve, reject });
    group.emails += part.emails.length;
  });
}

/** Launches the group once (the first of: its turn, a call ending, maxWaitMs); when it ends, the oldest waiting one. */
function start(sender: EmailSender, group: Group): void {
  if (group.launched) return;
  group.launched = true;
  const waiting = queued.get(sender);
  if (waiting?.includes(group)) waiting.splice(waiting.indexOf(group), 1);
  inFlight.set(sender, (inFlight.get(sender) ?? 0) + 1);
  void launch(sender, group).finally(() => {
    inFlight.set(sender, (inFlight.get(sender) ?? 1) - 1);
    // The oldest waiting call, out of the queue now (two calls ending in one turn launch two), at the end of this turn:
    // batches made ready by this call's answers join it.
    const next = queued.get(sender)?.shift();
    if (next) setImmediate(() => start(sender, next));
  });
}

async function launch(sender: EmailSender, group: Group): Promise<void> {
  let slotTaken = false;
  try {
    if (sender.pacingKey) {
      // The group stays open while it waits for its slot: batches ready meanwhile join it (up to 100 emails). A batch
      // took its slot with its rows (no round trip of its own): the call goes at the earliest of those; the others
      // stay taken unused, so the provider sees fewer calls than the limiter let through, never more.
      const first = group.parts[0];
      const shouldStop = async () => {
        await dropStopped(group);
        return group.parts.length === 0;
      };
      const taken = group.parts.flatMap((p) => (p.slotAt === undefined ? [] : [p.slotAt]));
      slotTaken = taken.length
        ? await waitUnlessStopped(Math.min(...taken) - Date.now(), shouldStop)
        : await first.pacing.acquire(sender.pacingKey, first.ctx.ratePerSecond, shouldStop);
    }
  } catch (error) {
    if (forming.get(sender) === group) forming.delete(sender);
    group.parts.forEach((p) => p.reject(error));
    return;
  }
  if (forming.get(sender) === group) forming.delete(sender);
  const parts = group.parts;
  if (parts.length === 0) return;
  if (parts.length === 1) return parts[0].resolve({ kind: "alone", slotTaken });
  try {
    await sendGroup(sender, parts, slotTaken);
  } catch (error) {
    parts.forEach((p) => p.reject(error));
  }
}

/** Takes out of the group the batches whose run must stop (cancel, hand-back): they stay pending. */
async function dropStopped(group: Group): Promise<void> {
  const stops = await Promise.all(group.parts.map((p) => p.ctx.shouldStop?.() ?? false));
  const stopped = group.parts.filter((_, i) => stops[i]);
  if (stopped.length === 0) return;
  group.parts = group.parts.filter((_, i) => !stops[i]);
  group.emails = group.parts.reduce((n, p) => n + p.emails.length, 0);
  stopped.forEach((p) => p.reject(new SendStopped()));
}

const refKey = (r: SharedRowRef) => `${r.runId}\u0000${r.nodeId}\u0000${r.itemIndex}`;

async function sendGroup(sender: EmailSender, parts: Waiting[], slotTaken: boolean): Promise<void> {
  const sendKey = `shared:${randomUUID()}`;
  const rows: SharedRow[] = [];
  const emailAt: OutgoingEmail[] = [];
  for (const part of parts) {
    part.emails.forEach((email, k) => {
      rows.push({ runId: part.key.chainRunId, nodeId: part.key.nodeId, itemIndex: part.itemIndexes[k], payload: JSON.stringify({ pos: rows.length, email }) });
      emailAt.push(email);
    });
  }
  const { shared } = parts[0].ledger;
  const claimed = new Set((await shared.claim(sendKey, rows)).map(refKey));
  const inCall = rows.map((r, pos) => ({ row: r, email: emailAt[pos] })).filter((x) => claimed.has(refKey(x.row)));
  let budget: string | undefined;
  let quota: "daily" | "monthly" | undefined;
  let results: SendResult[] = [];
  if (inCall.length > 0) {
    const claimedParts = parts.filter((p) => p.itemIndexes.some((i) => claimed.has(refKey({ runId: p.key.chainRunId, nodeId: p.key.nodeId, itemIndex: i }))));
    const first = parts[0].ctx;
    // Calls made for this key: a refusal may be released only if it answered the first (an earlier 5xx or dropped
    // connection may have delivered the call).
    let attempts = 0;
    const counted: EmailSender = {
      ...sender,
      sendBatch: (emails, key, options) => {
        attempts++;
        return sender.sendBatch(emails, key, options);
      },
      sendBatchDetailed: sender.sendBatchDetailed
        ? (emails, key, options) => {
            attempts++;
            return sender.sendBatchDetailed!(emails, key, options);
          }
        : undefined,
    };
    try {
      results = await sendBatchWithRetry(
        counted,
        inCall.map((x) => x.email),
        sendKey,
        {
          pacing: first.pacing,
          ratePerSecond: first.ratePerSecond,
          firstSlotAt: slotTaken ? Date.now() : undefined,
          deadline: Math.min(...claimedParts.map((p) => p.ctx.deadline)),
          // Claimed rows go in this call or in the same call later: it stops only when every run in it stops.
          shouldStop: async () => (await Promise.all(claimedParts.map((p) => p.ctx.shouldStop?.() ?? false))).every(Boolean),
          quotaSentence: async (q) => {
            quota = q;
            return "quota";
          },
          budgetSentence: async (lastError) => {
            budget = lastError;
            return "budget";
          },
        },
      );
    } catch (error) {
      if (!(error instanceof NodeError)) throw error;
      if (budget !== undefined) {
        const spent = new SharedBudgetSpent(budget);
        parts.forEach((p) => p.reject(spent));
        return;
      }
      if (attempts > 1) {
        // Refused after an attempt whose fate is unknown: the rows keep the key (a retry of any run sends the call
        // again whole), and every run in it fails with the provider's answer.
        for (const p of parts) p.reject(quota ? new NodeError(await p.ctx.quotaSentence(quota), { cause: error }) : error);
        return;
      }
      // A refusal or a quota answer to the first attempt: nothing of the call was sent. Each run sends its own emails
      // alone (and fails with its own sentence if the provider refuses those too).
      await shared.release(sendKey);
      parts.forEach((p) => p.resolve({ kind: "alone", slotTaken: false }));
      return;
    }
  }
  const idByRow = new Map(inCall.map((x, k) => [refKey(x.row), results[k].id]));
  const outcomes = parts.map((part) => {
    const ids = new Map<number, string>();
    const missing: number[] = [];
    for (const itemIndex of part.itemIndexes) {
      const id = idByRow.get(refKey({ runId: part.key.chainRunId, nodeId: part.key.nodeId, itemIndex }));
      if (id === undefined) missing.push(itemIndex);
      else ids.set(itemIndex, id);
    }
    return { ids, missing };
  });
  // Every row of the call marked sent, and the counts of each node that went whole, in one statement. A part with
  // rows missing sends those alone next, and its last statement counts.
  const counted = parts.flatMap((p, k) => (p.execRunId !== undefined && outcomes[k].missing.length === 0 ? [k] : []));
  const counts = await shared.markSentAndCount(
    sendKey,
    inCall.map((x, k) => ({ runId: x.row.runId, nodeId: x.row.nodeId, itemIndex: x.row.itemIndex, providerId: results[k].id })),
    counted.map((k) => ({ runId: parts[k].key.chainRunId, nodeId: parts[k].key.nodeId, execRunId: parts[k].execRunId! })),
  );
  const countsOf = new Map(counted.map((k, i) => [k, counts[i]]));
  parts.forEach((part, k) => part.resolve({ kind: "shared", ...outcomes[k], counts: countsOf.get(k) }));
}

/**
 * A shared call found pending on a resume (`inflight`): sent again whole, in its order, under its key, then its rows
 * still pending marked sent — whichever of its runs gets here first; the others find their rows sent.
 */
export async function resendShared(sender: EmailSender, shared: SharedSends, sendKey: string, ctx: SendContext): Promise<void> {
  const rows = await shared.rows(sendKey);
  if (rows.length === 0 || rows.every((r) => r.status === "sent")) return;
  const call = rows
    .map((r) => ({ row: r, ...(JSON.parse(r.payload) as { pos: number; email: OutgoingEmail }) }))
    .sort((a, b) => a.pos - b.pos);
  const results = await sendBatchWithRetry(sender, call.map((c) => c.email), sendKey, ctx);
  await shared.markSentAndCount(
    sendKey,
    call.flatMap((c, k) => (c.row.status === "sent" ? [] : [{ runId: c.row.runId, nodeId: c.row.nodeId, itemIndex: c.row.itemIndex, providerId: results[k].id }])),
    [],
  );
}
