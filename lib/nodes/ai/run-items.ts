import "server-only";
import { callModel, type ModelAnswer, type ModelFailure } from "@/lib/ai/call-model";
import { readRateHeaders } from "@/lib/ai/rate-headers";
import { approxCallTokens, approxTokens } from "@/lib/ai/tokens";
import type { AiCallLimits } from "../ports";
import { NodeError, type NodeOf, type NodeRuntime } from "../types";
import { aiData, answerKey, fmt, prepare, type Prepared } from "./items";
import { costOf } from "@/lib/ai/prices";
import { addSpend, capReached, capsOf, capSentence, loadTally } from "./spend";
import { holdLeanHeap, leanHeapPolicy } from "@/lib/ai/lean-heap";

/**
 * How calls are retried and stopped. Mutable so tests can shorten it (tests count calls, never time).
 * - transient answers (429, 5xx, timeouts, dropped connections) are asked again after a jittered backoff from
 *   `backoffMs` doubling up to `maxBackoffMs`, while the node's budget (`budgetMs`, else AI_BUDGET_MINUTES) lasts;
 * - a cancel stops new calls at once and gives the calls in flight `cancelGraceMs` to answer (their answers are
 *   recorded), then interrupts them.
 */
export const aiItemPolicy = { backoffMs: 500, maxBackoffMs: 30_000, budgetMs: undefined as number | undefined, cancelGraceMs: 2_000, stopCheckMs: 500 };

const LANES_PER_CALL = 3;
const MAX_LANES = 96;

/** Calls in flight per provider key in this process (the shared limiter bounds them across processes). */
const inFlight = new Map<string, { active: number; waiting: (() => void)[] }>();

async function enter(key: string, max: number): Promise<() => void> {
  let gate = inFlight.get(key);
  if (!gate) inFlight.set(key, (gate = { active: 0, waiting: [] }));
  while (gate.active >= max) await new Promise<void>((resolve) => gate!.waiting.push(resolve));
  gate.active++;
  return () => {
    gate!.active--;
    const next = gate!.waiting.shift();
    if (next) next();
    else if (gate!.active === 0) inFlight.delete(key);
  };
}

/** A batch of the node failed it: the node's other batches in this process start no new call. */
const nodeFailed = new WeakMap<NodeRuntime, true>();

/** When the node started in this process: its AI budget runs from there. */
const startedAt = new WeakMap<NodeRuntime, number>();
export function noteStart(rt: NodeRuntime): void {
  if (!startedAt.has(rt)) startedAt.set(rt, Date.now());
}

export type BatchContext = { budgetMinutes: number; limits: AiCallLimits; limiterKey: string };

/**
 * Asks the model for the pending items of [from, to): at most `maxConcurrency` at once, each answer (or failure)
 * recorded the moment it arrives. Answers "stopped" when a cancel (or a hand-back) stopped it: unasked items stay
 * pending. Throws a NodeError when the node must fail (an item with onItemError "fail", a quota, the budget).
 */
export async function runItems(node: NodeOf<"AI">, rt: NodeRuntime, from: number, to: number, ctx: BatchContext): Promise<"stopped" | void> {
  const prep = await prepare(node, rt);
  const key = answerKey(node, rt);
  const { answers } = rt.ports;
  const pending = await answers.pending(key, from, Math.min(to, prep.count));
  if (pending.length === 0) return;
  noteStart(rt);
  // The ledger's spend so far (a sum over the run's items) is read only when a cap needs it: without one, a statement
  // per 100 items over every row of the node would grow with the node (O(n²) over a 100,000-item node).
  const caps = capsOf(prep.settings, aiData(node).maxCostUsd);
  if (caps.node !== null || caps.run !== null) await loadTally(rt, key);
  const deadline = (startedAt.get(rt) ?? Date.now()) + (aiItemPolicy.budgetMs ?? ctx.budgetMinutes * 60_000);
  const controller = new AbortController();
  let stopping = false;
  let failure: NodeError | undefined;
  const watcher = setInterval(() => {
    if (stopping) return;
    void rt.shouldStop().then((stop) => {
      if (!stop || stopping) return;
      stopping = true;
      setTimeout(() => controller.abort(), aiItemPolicy.cancelGraceMs).unref?.();
    }, () => undefined);
  }, aiItemPolicy.stopCheckMs);
  const halted = () => stopping || failure !== undefined || nodeFailed.has(rt);
  // A big node's calls keep V8's old generation near what is alive (lib/ai/lean-heap.ts).
  const releaseHeap = prep.count >= leanHeapPolicy.minItems ? holdLeanHeap() : undefined;
  try {
    let next = 0;
    const lane = async () => {
      while (next < pending.length && !halted()) {
        const index = pending[next++];
        // Rendered once: the call asks it, the settle keys the answer by its hash.
        const request = prep.render(index);
        const outcome = await askItem(rt, prep, node, request, ctx, { deadline, signal: controller.signal, halted });
        const error = await settle(rt, node, prep, index, request.hash, outcome, ctx.budgetMinutes);
        if (error && !failure) {
          failure = error;
          nodeFailed.set(rt, true);
        }
      }
    };
    // More lanes than calls in flight: a lane spends much of an item in the ledger's statements, outside the call;
    // the gate (and the shared limiter's leases) bound the calls themselves to maxConcurrency.
    const lanes = Math.min(pending.length, ctx.limits.maxConcurrency * LANES_PER_CALL, MAX_LANES);
    await Promise.all(Array.from({ length: lanes }, lane));
  } finally {
    clearInterval(watcher);
    releaseHeap?.();
  }
  if (failure) {
    if (failure instanceof NodeFailure) failure = new NodeError(await failure.word());
    await answers.skipPending(key, failure.message);
    throw failure;
  }
  if (stopping) return "stopped";
}

type Outcome = ModelAnswer | ModelFailure | { ok: false; kind: "budget"; message: string } | { ok: false; kind: "cap"; cap: number };

/**
 * One item: asked until it is answered, refused, or the budget or a stop ends the waiting. Every attempt takes its
 * slot from the shared limiter and gives it back with what the provider said (real tokens, rate-limit headers); a
 * transient failure waits for the shared hold when the provider named one, else for its own jittered backoff.
 */
async function askItem(
  rt: NodeRuntime,
  prep: Prepared,
  node: NodeOf<"AI">,
  { prompt, system }: { prompt: string; system?: string },
  ctx: BatchContext,
  opts: { deadline: number; signal: AbortSignal; halted: () => boolean },
): Promise<Outcome> {
  const data = aiData(node);
  const estimate = approxCallTokens(system, prompt, data.output);
  const limiter = rt.ports.aiLimiter;
  const aborted = { ok: false, kind: "aborted", message: "Cancelled", status: null, headers: {} } as const;
  const caps = capsOf(prep.settings, data.maxCostUsd);
  const inputEstimate = approxTokens((system ?? "") + prompt);
  let last: ModelFailure | undefined;
  for (let attempt = 0; ; attempt++) {
    if (opts.halted()) return aborted;
    const leave = await enter(ctx.limiterKey, ctx.limits.maxConcurrency);
    let answer: ModelAnswer | ModelFailure;
    let feedback: ReturnType<typeof readRateHeaders>;
    try {
      if (opts.halted()) return aborted;
      // Checked and reserved together, right before the call: the call's input is counted against the caps while it
      // runs, so calls in flight overshoot a cap by their output only.
      const cap = capReached(rt, caps, prep.prices, inputEstimate);
      if (cap !== null) return { ok: false, kind: "cap", cap };
      const reserved = costOf(prep.prices, inputEstimate, 0);
      addSpend(rt, reserved);
      const slot = await limiter.acquire(ctx.limiterKey, ctx.limits, estimate, { deadline: opts.deadline, halted: opts.halted });
      if (slot.kind !== "ok") addSpend(rt, reserved === null ? null : -reserved);
      if (slot.kind === "stopped") return aborted;
      if (slot.kind === "deadline") return { ok: false, kind: "budget", message: last?.message ?? "the provider's rate limit allowed no call in time" };
      // callModel never throws for a provider's answer; a lease left by anything else expires with the call timeout.
      answer = await callModel({ settings: prep.settings, modelId: prep.modelId, system, prompt, temperature: data.temperature, outputs: data.output, signal: opts.signal });
      addSpend(rt, reserved === null ? null : -reserved);
      const used = answer.usage;
      feedback = readRateHeaders(answer.headers, answer.ok ? 200 : answer.status);
      await limiter.release(ctx.limiterKey, slot.slot, ctx.limits, {
        tokenDelta: used ? used.inputTokens + used.outputTokens - estimate : -estimate,
        ...feedback,
      });
    } finally {
      leave();
    }
    if (answer.ok || answer.kind !== "transient") return answer;
    last = answer;
    const wait = feedback.holdMs ? 0 : backoff(attempt);
    if (Date.now() + wait > opts.deadline) return { ok: false, kind: "budget", message: last.message };
    if (!(await sleep(wait, opts))) return aborted;
  }
}

/** Full jitter: a random wait up to the doubled step, so waiting calls do not return together. */
function backoff(attempt: number): number {
  const cap = Math.min(aiItemPolicy.maxBackoffMs, aiItemPolicy.backoffMs * 2 ** Math.min(attempt, 20));
  return Math.max(aiItemPolicy.backoffMs / 2, Math.random() * cap);
}

/** Sleeps `ms` unless the node halts meanwhile (false then). */
async function sleep(ms: number, opts: { signal: AbortSignal; halted: () => boolean }): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (opts.halted() || opts.signal.aborted) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(until - Date.now(), 100)));
  }
  return true;
}

/** Records the outcome; answers the NodeError that must fail the node, if any. */
async function settle(rt: NodeRuntime, node: NodeOf<"AI">, prep: Prepared, index: number, hash: string, outcome: Outcome, budgetMinutes: number): Promise<NodeError | undefined> {
  const key = answerKey(node, rt);
  // The settle's statement also moves the node's progress on (a list node shows `progress: { done, total }`).
  const progressRunId = prep.list ? rt.runId : undefined;
  if (outcome.ok) {
    const costUsd = costOf(prep.prices, outcome.usage.inputTokens, outcome.usage.outputTokens);
    addSpend(rt, costUsd);
    await rt.ports.answers.settle(key, { itemIndex: index, hash, output: outcome.output, ...outcome.usage, costUsd, progressRunId });
    return undefined;
  }
  if (outcome.kind === "aborted") return undefined;
  if (outcome.kind === "item") {
    const error = `${prep.list ? `Item ${index}: ` : ""}${outcome.message}`;
    const costUsd = outcome.usage ? costOf(prep.prices, outcome.usage.inputTokens, outcome.usage.outputTokens) : null;
    addSpend(rt, costUsd);
    await rt.ports.answers.settle(key, { itemIndex: index, hash, error, ...(outcome.usage ?? {}), costUsd, progressRunId });
    if (aiData(node).onItemError === "skip" && prep.list) return undefined;
    return new NodeError(prep.list ? `Item ${fmt(index)} failed: ${outcome.message}` : outcome.message);
  }
  if (outcome.kind === "quota") await rt.log("warn", `The AI provider refused for quota or billing: ${outcome.message}`);
  // Worded once every lane has stopped and recorded its answer, so "N items are done" counts them all.
  return new NodeFailure(async () => {
    const { counts } = await rt.ports.answers.totals(key);
    if (outcome.kind === "cap") return capSentence(outcome.cap, counts.done, prep.count);
    const done = `${fmt(counts.done)} of ${fmt(prep.count)} items are done`;
    if (outcome.kind === "quota") return `The AI provider's quota is used up: ${done}. Retry the run after topping up; finished items will not be asked again.`;
    const minutes = aiItemPolicy.budgetMs !== undefined ? aiItemPolicy.budgetMs / 60_000 : budgetMinutes;
    return `The AI provider kept failing for ${minutes} minute${minutes === 1 ? "" : "s"} (AI_BUDGET_MINUTES; last answer: ${outcome.message}): ${done}. Retry the run later; finished items will not be asked again.`;
  });
}

/** A node failure whose sentence counts the items done: worded after the batch's lanes have all stopped. */
class NodeFailure extends NodeError {
  constructor(readonly word: () => Promise<string>) {
    super("The AI node stopped");
  }
}
