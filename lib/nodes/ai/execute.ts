import "server-only";
import { limiterKey } from "@/lib/ai/limiter-key";
import { DEFAULT_AI_MAX_CONCURRENCY } from "@/lib/schemas/accounts";
import type { AiSettings } from "@/lib/ai/settings";
import { sliceClock } from "@/lib/slices";
import { NodeError, type NodeExecutor, type NodeOf, type NodeRuntime } from "../types";
import type { AnswerTotals } from "../ports";
import { aiData, answerKey, fmt, mergeItem, prepare } from "./items";
import { noteStart, runItems, type BatchContext } from "./run-items";
import { assertPriced, capsOf } from "./spend";
import { completeEstimate, estimateSample, sampleIndices } from "./estimate";
import { runProviderBatches } from "@/lib/ai/batch/run";

/** Items per durable step: the engine runs a few steps at once and checks cancel between groups of them. */
export const AI_ITEMS_PER_BATCH = 100;
/** Ledger rows read per statement when the node's output is assembled. */
const READ_PAGE = 2_000;

/**
 * AI runs like OUTPUT, as several durable steps over one ledger. The first renders every item's request and records
 * its hash in the answer ledger (items answered before for the same hash stay answered); then one step per 100 items
 * asks the model for those still pending (paced, retried within the AI budget, each answer recorded as it arrives);
 * `complete` builds the output from the ledger. Without `forEach` the node is one item: its output is the declared
 * fields. Both forms carry `usage`.
 */
export const aiExecutor: NodeExecutor<"AI"> = {
  async execute(node, rt) {
    const prep = await prepare(node, rt);
    assertPriced(capsOf(prep.settings, aiData(node).maxCostUsd), prep.prices, prep.modelId);
    noteStart(rt);
    // An estimate asks for its sample only: items spread over the list (sampleIndices).
    const sampled = rt.mode === "estimate" ? sampleIndices(prep.count, estimateSample(rt, prep.count)) : null;
    const asked = sampled ? sampled.length : prep.count;
    const requests: { itemIndex: number; hash: string }[] = new Array(asked);
    const clock = sliceClock();
    for (let i = 0; i < asked; i++) {
      if (clock.due()) await clock.yield();
      const index = sampled ? sampled[i] : i;
      requests[i] = { itemIndex: index, hash: prep.render(index).hash };
    }
    const key = answerKey(node, rt);
    await rt.ports.answers.record(key, requests, { reuseDays: aiData(node).reuseAnswersDays });
    if (prep.list) {
      const { counts } = await rt.ports.answers.totals(key);
      await rt.ports.answers.writeProgress(rt.runId, node.id, { done: counts.done + counts.failed, total: prep.count });
    }
    // Batch mode: one step that submits the items to the provider's batch API and polls it (lib/ai/batch/run.ts).
    if (batchMode(node, rt)) return { kind: "batched", batches: 1 };
    // An estimate's sample (at most 20 items, anywhere in the list) is one step over the whole list.
    if (sampled) return { kind: "batched", batches: 1 };
    return { kind: "batched", batches: Math.max(1, Math.ceil(asked / AI_ITEMS_PER_BATCH)) };
  },

  async runBatch(node, rt, batch) {
    if (batchMode(node, rt)) return runProviderBatches(node, rt);
    const prep = await prepare(node, rt);
    if (rt.mode === "estimate") return runItems(node, rt, 0, prep.count, batchContext(rt, prep.settings));
    const from = batch * AI_ITEMS_PER_BATCH;
    return runItems(node, rt, from, from + AI_ITEMS_PER_BATCH, batchContext(rt, prep.settings));
  },

  async complete(node, rt) {
    const prep = await prepare(node, rt);
    const key = answerKey(node, rt);
    const totals = await rt.ports.answers.totals(key);
    if (totals.counts.pending > 0) throw new NodeError(`${fmt(totals.counts.pending)} item(s) were not answered: retry the run; finished items will not be asked again.`);
    const usage = usageOf(totals);
    if (rt.mode === "estimate") return completeEstimate(node, rt, prep, totals, usage);
    if (!prep.list) {
      const [row] = await rt.ports.answers.read(key, 0, 1);
      if (row?.status !== "done" || !row.output) throw new NodeError(row?.error ?? "The AI call did not answer: retry the run.");
      return { kind: "done", output: { ...row.output, usage }, log: usageLog(totals) };
    }
    const items: Record<string, unknown>[] = [];
    let failed = 0;
    for (let from = 0; from < prep.count; from += READ_PAGE) {
      for (const row of await rt.ports.answers.read(key, from, from + READ_PAGE)) {
        if (row.status === "done" && row.output) items.push(mergeItem(prep.list[row.itemIndex], row.output));
        else failed++;
      }
    }
    return {
      kind: "done",
      output: { items, count: items.length, failed, usage },
      itemsIn: prep.count,
      itemsOut: items.length,
      log: usageLog(totals) + (failed ? `; ${fmt(failed)} item(s) failed and were left out` : ""),
    };
  },
};

/** The provider's batch API answers the items; an estimate asks its sample directly. */
const batchMode = (node: NodeOf<"AI">, rt: NodeRuntime) => aiData(node).mode === "batch" && rt.mode !== "estimate";

export function usageOf(totals: AnswerTotals) {
  return { calls: totals.calls, inputTokens: totals.inputTokens, outputTokens: totals.outputTokens, costUsd: totals.costUsd };
}

function usageLog(totals: AnswerTotals): string {
  const cost = totals.costUsd === null ? "cost unknown" : `$${totals.costUsd.toFixed(4)}`;
  const reused = totals.counts.done + totals.counts.failed - totals.calls;
  return `AI: ${fmt(totals.calls)} call(s), ${fmt(totals.inputTokens)} input and ${fmt(totals.outputTokens)} output tokens, ${cost}` + (reused > 0 ? `; ${fmt(reused)} answer(s) reused` : "");
}

function batchContext(rt: NodeRuntime, settings: AiSettings): BatchContext {
  return {
    budgetMinutes: rt.ports.aiLimiter.budgetMinutes,
    limiterKey: limiterKey(settings),
    limits: {
      requestsPerMinute: settings.requestsPerMinute ?? null,
      tokensPerMinute: settings.tokensPerMinute ?? null,
      maxConcurrency: settings.maxConcurrency ?? DEFAULT_AI_MAX_CONCURRENCY,
    },
  };
}


