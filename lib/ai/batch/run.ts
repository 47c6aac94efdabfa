import "server-only";
import { getDb } from "@/db/client";
import { costOf } from "@/lib/ai/prices";
import { approxTokens } from "@/lib/ai/tokens";
import { aiData, answerKey, fmt, prepare, type Prepared } from "@/lib/nodes/ai/items";
import { capsOf, capSentence } from "@/lib/nodes/ai/spend";
import type { LedgerKey } from "@/lib/nodes/ports";
import { requestDurableWait } from "@/lib/nodes/durable-wait";
import { NodeError, type NodeOf, type NodeRuntime } from "@/lib/nodes/types";
import {
  BATCH_PRICE_FACTOR,
  batchResults,
  batchState,
  cancelProviderBatch,
  classifyBatchError,
  batchTag,
  findSubmittedBatch,
  hasBatchApi,
  submitBatch,
  type BatchCall,
  type FoundBatch,
} from "./provider";
import { pgBatchStore, type AiBatchStore, type BatchRow } from "./store";

/**
 * How batch mode waits. Mutable so tests can shorten it (they count polls and calls, never time):
 * - `pollMs`: the provider is asked how its batch is doing at most this often (30 s; AI_BATCH_POLL_MS may only lower
 *   it, for tests);
 * - `stopCheckMs`: how often a wait asks whether the run must stop (a cancel cancels the provider's batch);
 * - `callTimeoutMs`: one request to the batch API (a results file may take longer to read than a model call);
 * - `submitGraceMs`: a row without its id is looked up at the provider only once its submission's call, plus this,
 *   has surely ended (another process may still be making it).
 */
export const aiBatchPolicy = {
  pollMs: Math.min(30_000, Number(process.env.AI_BATCH_POLL_MS) > 0 ? Number(process.env.AI_BATCH_POLL_MS) : 30_000),
  stopCheckMs: 500,
  callTimeoutMs: 300_000,
  /** Beyond a submission's call timeout, how long the provider may take to settle an abandoned call. */
  submitGraceMs: 60_000,
};

/** Items per provider batch: well under both providers' limits (OpenAI 50,000 requests, Anthropic 100,000). */
export const BATCH_MAX_ITEMS = 10_000;

const customId = (tag: string, index: number) => `${tag}-item-${index}`;
/** The item a request id names, when it carries the batch's tag (or none, as before tags); else -1. */
function indexOf(id: string, tag: string): number {
  const m = /^(?:(fm[0-9a-f]+)-)?item-(\d+)$/.exec(id);
  return m && (m[1] === undefined || m[1] === tag) ? Number(m[2]) : -1;
}

/** The node's batch store: the engine's port when it binds one, else the process's database. */
async function storeOf(rt: NodeRuntime): Promise<AiBatchStore> {
  return rt.ports.aiBatches ?? pgBatchStore(await getDb());
}

/**
 * Batch mode's one step: submits the node's pending items as provider batches (each recorded before its submission
 * and given its id right after), polls them until they end, and records every answer in the answer ledger. A batch
 * recorded by an earlier process (a restart, a takeover) is polled, never submitted again; one recorded without its
 * id is looked up at the provider first (lookUp). Answers "stopped" when the run must stop: on a cancel the
 * provider's batches are cancelled first; on a hand-back they keep going and the next process polls them.
 *
 * The work is a series of passes (batchPass) whose state is the `ai_batches` rows and the answer ledger. Between two
 * passes the step waits in the process, or, under a driver with durable waits (Inngest), ends and is run again after
 * the wait (lib/nodes/durable-wait.ts): a day-long batch never holds a process or an invocation.
 */
export async function runProviderBatches(node: NodeOf<"AI">, rt: NodeRuntime): Promise<"stopped" | void> {
  const prep = await prepare(node, rt);
  if (!hasBatchApi(prep.settings.provider)) {
    throw new NodeError(`Batch mode needs a provider with a batch API (OpenAI or Anthropic); this account's is ${prep.settings.provider}. Use mode "sync".`);
  }
  const key = answerKey(node, rt);
  const store = await storeOf(rt);
  const state: PassState = { failures: [], capHit: null, submitted: false, failedSubmissions: 0 };
  for (;;) {
    const next = await batchPass(node, rt, prep, key, store, state);
    if (next === "done") break;
    if (next === 0) continue;
    // A driver with durable waits ends the step here and runs it again after `next` (its state is in the rows).
    const stop = await rt.shouldStop();
    if (!stop && requestDurableWait(next)) return;
    if (stop || !(await wait(rt, next))) {
      if (await store.cancelRequested(rt.runId)) await cancelAll(rt, prep, key, store, (await store.open(key)).filter((r) => r.batchId));
      return "stopped";
    }
  }
  await writeProgress(rt, key, prep);
  if (state.capHit !== null) {
    const { counts } = await rt.ports.answers.totals(key);
    const sentence = capSentence(state.capHit, counts.done, prep.count);
    await rt.ports.answers.skipPending(key, sentence);
    throw new NodeError(sentence);
  }
  if (aiData(node).onItemError === "skip" && prep.list) return;
  const first = state.failures.sort((a, b) => a.index - b.index)[0] ?? (await firstFailure(rt, key, prep));
  if (first) {
    await rt.ports.answers.skipPending(key, first.message);
    throw new NodeError(prep.list ? `Item ${fmt(first.index)} failed: ${first.message}` : first.message);
  }
}

/**
 * What a step remembers across its passes. Each is also derivable from the rows (failures from the ledger, the cap
 * from the spend, `submitted` from "nothing left that fits"), so a pass that starts from a fresh state is correct.
 */
type PassState = {
  failures: { index: number; message: string }[];
  capHit: number | null;
  /** The pending items were submitted once in this step: what is pending after their batches is left (the cap). */
  submitted: boolean;
  failedSubmissions: number;
};

/**
 * One pass over the node's batches: rows without their id are looked up; with nothing open, the pending items are
 * submitted; each open batch is polled once and, ended, collected. Answers "done" when nothing is open or left to
 * submit, else how long to wait before the next pass (0: at once).
 */
async function batchPass(node: NodeOf<"AI">, rt: NodeRuntime, prep: Prepared, key: LedgerKey, store: AiBatchStore, state: PassState): Promise<"done" | number> {
  let open = await store.open(key);
  const unsettled = open.filter((r) => !r.batchId);
  if (unsettled.length > 0) {
    let waiting = false;
    for (const row of unsettled) {
      const found = await lookUp(node, rt, prep, key, store, row);
      if (found === "wait") waiting = true;
      // Not at the provider: its items are pending still and go in the next submission.
      if (found === "absent") state.submitted = false;
    }
    if (waiting) return aiBatchPolicy.pollMs;
    open = await store.open(key);
  }
  if (open.length === 0) {
    if (state.submitted) return "done";
    const pending = await rt.ports.answers.pending(key, 0, prep.count);
    if (pending.length === 0) return "done";
    const outcome = await submitPending(node, rt, prep, key, store, pending);
    state.capHit = outcome.capHit;
    state.submitted = true;
    if (outcome.unanswered) {
      // The call failed without an answer (a timeout, a dropped connection, 5xx): the provider may have the batch.
      // Its row is looked up after a poll interval, and submitted again only if the provider does not have it.
      if (++state.failedSubmissions > SUBMIT_ATTEMPTS) {
        throw new NodeError(`${outcome.unanswered}. Retry the run: the batch is looked up at the provider first, never submitted twice.`);
      }
      return 0;
    }
    // Nothing fitted under the cap: nothing to wait for.
    if (outcome.batches === 0) return "done";
    return 0;
  }
  let running = 0;
  let finished = 0;
  for (const row of open) {
    try {
      const polled = await batchState(prep.settings, row.batchId!, call());
      await store.setState(key, row.seq, "polled");
      if (polled.ended) state.failures.push(...(await collect(node, rt, prep, key, store, row)));
      else {
        running++;
        finished += polled.finished ?? 0;
      }
    } catch (error) {
      const why = classifyBatchError(error);
      if (why.kind !== "transient") throw new NodeError(`${why.message}. The provider's batch ${row.batchId} is left as it is; retry the run to poll it again.`);
      await rt.log("warn", `${why.message}: asked again at the next poll`);
      running++;
    }
  }
  if (running === 0) return 0;
  if (prep.list) {
    const { counts } = await rt.ports.answers.totals(key);
    await rt.ports.answers.writeProgress(rt.runId, key.nodeId, { done: Math.min(prep.count, counts.done + counts.failed + finished), total: prep.count });
  }
  return aiBatchPolicy.pollMs;
}

/** Submissions that failed without an answer, tried again (each after a look-up at the provider) before the node fails. */
const SUBMIT_ATTEMPTS = 5;
/** A row without its id older than this is submitted again whatever the provider lists: any twin has expired by then. */
const LOOKUP_GIVE_UP_MS = 25 * 3_600_000;

/** Rows whose look-up was inconclusive, logged once per node runtime. */
const notedUnsure = new WeakMap<NodeRuntime, Set<number>>();

/**
 * A batch recorded without its id: its process stopped (or its call failed) after the row was written, perhaps after
 * the provider accepted it. Once its call has surely ended (`lookupDue`), the provider is asked for the batch tagged
 * with the row's tag: found, it is adopted (given its id, then polled like any other); surely absent, the row is
 * abandoned and its items go in the next submission; unsure (Anthropic, a batch of as many requests still in
 * progress), it is asked again at the next poll.
 */
async function lookUp(node: NodeOf<"AI">, rt: NodeRuntime, prep: Prepared, key: LedgerKey, store: AiBatchStore, row: BatchRow): Promise<"found" | "absent" | "wait"> {
  if (!row.lookupDue) return "wait";
  let found: FoundBatch;
  try {
    found = await findSubmittedBatch(
      prep.settings,
      { tag: batchTag(key, row.seq), itemCount: row.items.length, sinceMs: row.createdAtMs },
      (ids) => store.knownBatchIds(key.accountId, ids),
      call(),
    );
  } catch (error) {
    const why = classifyBatchError(error);
    if (why.kind !== "transient") throw new NodeError(`${why.message}. AI batch ${row.seq} could not be looked up at the provider; retry the run to look again (it is never submitted twice).`);
    await rt.log("warn", `${why.message}: AI batch ${row.seq} is looked up again at the next poll`);
    return "wait";
  }
  if (found.kind === "found") {
    if (await store.submitted(key, row.seq, found.batchId)) {
      await rt.log("info", `AI batch ${row.seq} of node "${node.id}" was found at the provider (${found.batchId}) without its id recorded: it is polled, not submitted again`);
    }
    return "found";
  }
  if (found.kind === "absent" || Date.now() - row.createdAtMs > LOOKUP_GIVE_UP_MS) {
    await rt.log("warn", `AI batch ${row.seq} of node "${node.id}" was not submitted (the provider does not have it): its ${fmt(row.items.length)} item(s) are submitted again`);
    await store.setState(key, row.seq, "abandoned");
    return "absent";
  }
  let noted = notedUnsure.get(rt);
  if (!noted) notedUnsure.set(rt, (noted = new Set()));
  if (!noted.has(row.seq)) {
    noted.add(row.seq);
    await rt.log("info", `AI batch ${row.seq} of node "${node.id}" has no id recorded and the provider cannot say yet whether it has it (${found.why}): it is looked up at each poll, and submitted again only once the provider surely does not have it`);
  }
  return "wait";
}

/**
 * Submits the pending items, BATCH_MAX_ITEMS a batch: each batch is recorded before its submission (with the time its
 * call ends at the latest) and given the provider's id right after. A call that fails without an answer leaves its
 * row to be looked up (`unanswered`); a refusal abandons it and fails the node. With a spend cap, only the items
 * whose input (at the batch price) fits under it go.
 */
async function submitPending(
  node: NodeOf<"AI">,
  rt: NodeRuntime,
  prep: Prepared,
  key: LedgerKey,
  store: AiBatchStore,
  pending: number[],
): Promise<{ capHit: number | null; batches: number; unanswered?: string }> {
  const data = aiData(node);
  const { items, capHit } = await withinCaps(rt, prep, key, capsOf(prep.settings, data.maxCostUsd), pending);
  const first = await store.nextSeq(key);
  let seq = first;
  for (let start = 0; start < items.length; start += BATCH_MAX_ITEMS) {
    const chunk = items.slice(start, start + BATCH_MAX_ITEMS);
    const rendered = chunk.map((index) => ({ index, ...prep.render(index) }));
    const callMs = aiBatchPolicy.callTimeoutMs + aiBatchPolicy.submitGraceMs;
    if (!(await store.begin(key, { seq, provider: prep.settings.provider, items: rendered.map((r) => [r.index, r.hash]), callMs }))) {
      throw new NodeError("Another process is submitting this node's AI batch: retry the run; finished items will not be asked again.");
    }
    const tag = batchTag(key, seq);
    let batchId: string;
    try {
      batchId = await submitBatch(
        prep.settings,
        prep.modelId,
        { outputs: data.output, temperature: data.temperature },
        rendered.map((r) => ({ id: customId(tag, r.index), system: r.system, prompt: r.prompt })),
        tag,
        call(),
      );
    } catch (error) {
      const why = classifyBatchError(error);
      if (why.kind === "transient") {
        await rt.log("warn", `${why.message}: AI batch ${seq} is looked up at the provider in ${Math.round(aiBatchPolicy.pollMs / 1000)} s and submitted again only if the provider does not have it`);
        await store.lookUpAfter(key, seq, aiBatchPolicy.pollMs);
        return { capHit, batches: seq - first + 1, unanswered: why.message };
      }
      // A refusal: the provider did not create the batch.
      await store.setState(key, seq, "abandoned");
      if (why.kind === "quota") {
        const { counts } = await rt.ports.answers.totals(key);
        throw new NodeError(`The AI provider's quota is used up: ${fmt(counts.done)} of ${fmt(prep.count)} items are done. Retry the run after topping up; finished items will not be asked again.`);
      }
      throw new NodeError(`${why.message}. No item of this batch was asked; retry the run.`);
    }
    if (!(await store.submitted(key, seq, batchId))) {
      await rt.log("warn", `AI batch ${seq} (${batchId}) was settled by another process meanwhile`);
    }
    await rt.log("info", `AI batch ${seq} of node "${node.id}": ${fmt(chunk.length)} item(s) submitted to the provider's batch API (${batchId})`);
    seq++;
  }
  return { capHit, batches: seq - first };
}

/** The pending items whose input fits under the caps at the batch price (all of them without a cap). */
async function withinCaps(
  rt: NodeRuntime,
  prep: Prepared,
  key: LedgerKey,
  caps: { node: number | null; run: number | null },
  pending: number[],
): Promise<{ items: number[]; capHit: number | null }> {
  if (caps.node === null && caps.run === null) return { items: pending, capHit: null };
  const spent = await rt.ports.answers.spent(key);
  let node = spent.node;
  let run = spent.run;
  const items: number[] = [];
  for (const index of pending) {
    const { prompt, system } = prep.render(index);
    const cost = (costOf(prep.prices, approxTokens((system ?? "") + prompt), 0) ?? 0) * BATCH_PRICE_FACTOR;
    if (caps.node !== null && node + cost > caps.node) return { items, capHit: caps.node };
    if (caps.run !== null && run + cost > caps.run) return { items, capHit: caps.run };
    node += cost;
    run += cost;
    items.push(index);
  }
  return { items, capHit: null };
}

/** A cancel of the run: each open batch is cancelled at the provider (its answers so far are not read). */
async function cancelAll(rt: NodeRuntime, prep: Prepared, key: LedgerKey, store: AiBatchStore, rows: BatchRow[]): Promise<void> {
  for (const row of rows) {
    try {
      await cancelProviderBatch(prep.settings, row.batchId!, call());
      await store.setState(key, row.seq, "cancelled");
      await rt.log("info", `AI batch ${row.seq} (${row.batchId}) cancelled at the provider`);
    } catch (error) {
      await rt.log("warn", `AI batch ${row.batchId} could not be cancelled at the provider: ${classifyBatchError(error).message}`);
    }
  }
}

/**
 * Records an ended batch's results in the answer ledger (only for items still pending with the same request hash,
 * so an answer is recorded once whoever reads the file), at the batch price. Answers the items that failed.
 */
async function collect(node: NodeOf<"AI">, rt: NodeRuntime, prep: Prepared, key: LedgerKey, store: AiBatchStore, row: BatchRow): Promise<{ index: number; message: string }[]> {
  const hashes = new Map(row.items);
  const tag = batchTag(key, row.seq);
  const failures: { index: number; message: string }[] = [];
  const cost = (input: number, output: number) => {
    const full = costOf(prep.prices, input, output);
    return full === null ? null : full * BATCH_PRICE_FACTOR;
  };
  const seen = new Set<number>();
  try {
    for await (const result of batchResults(prep.settings, row.batchId!, aiData(node).output, call())) {
      const index = indexOf(result.id, tag);
      const hash = hashes.get(index);
      if (hash === undefined || seen.has(index)) continue;
      seen.add(index);
      if (result.ok) {
        await rt.ports.answers.settle(key, { itemIndex: index, hash, output: result.output, inputTokens: result.inputTokens, outputTokens: result.outputTokens, costUsd: cost(result.inputTokens, result.outputTokens) });
        continue;
      }
      const usage = result.kind === "item" && result.inputTokens !== undefined ? { inputTokens: result.inputTokens, outputTokens: result.outputTokens ?? 0 } : null;
      const error = `${prep.list ? `Item ${index}: ` : ""}${result.message}`;
      await rt.ports.answers.settle(key, { itemIndex: index, hash, error, ...(usage ?? {}), costUsd: usage ? cost(usage.inputTokens, usage.outputTokens) : null });
      failures.push({ index, message: result.message });
    }
  } catch (error) {
    const why = classifyBatchError(error);
    throw new NodeError(`${why.message}. The answers of batch ${row.batchId} could not be read; retry the run to read them again (nothing is asked twice).`);
  }
  // An item the results do not name was not answered: it fails like a refused one.
  for (const [index, hash] of row.items) {
    if (seen.has(index)) continue;
    const message = "The provider's batch ended without an answer for this item";
    await rt.ports.answers.settle(key, { itemIndex: index, hash, error: `${prep.list ? `Item ${index}: ` : ""}${message}`, costUsd: null });
    failures.push({ index, message });
  }
  await store.setState(key, row.seq, "collected");
  await writeProgress(rt, key, prep);
  return failures;
}

/** An item recorded as failed by an earlier process (its batch was read before a restart), if any. */
async function firstFailure(rt: NodeRuntime, key: LedgerKey, prep: Prepared): Promise<{ index: number; message: string } | undefined> {
  const { counts } = await rt.ports.answers.totals(key);
  if (counts.failed === 0) return undefined;
  for (let from = 0; from < prep.count; from += 2_000) {
    const row = (await rt.ports.answers.read(key, from, from + 2_000)).find((r) => r.status === "failed");
    if (row) return { index: row.itemIndex, message: (row.error ?? "failed").replace(/^Item \d+: /, "") };
  }
  return undefined;
}

async function writeProgress(rt: NodeRuntime, key: LedgerKey, prep: Prepared): Promise<void> {
  if (!prep.list) return;
  const { counts } = await rt.ports.answers.totals(key);
  await rt.ports.answers.writeProgress(rt.runId, key.nodeId, { done: counts.done + counts.failed, total: prep.count });
}

const call = (): BatchCall => ({ timeoutMs: aiBatchPolicy.callTimeoutMs });

/** Waits `ms`, asking every `stopCheckMs` whether the run must stop; false when it must. */
async function wait(rt: NodeRuntime, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if (await rt.shouldStop()) return false;
    const left = until - Date.now();
    if (left <= 0) return true;
    await new Promise((resolve) => setTimeout(resolve, Math.min(left, aiBatchPolicy.stopCheckMs)));
  }
}
