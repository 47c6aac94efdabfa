import "server-only";
import { costOf } from "@/lib/ai/prices";
import { countCallTokens } from "@/lib/ai/tokens";
import { BATCH_PRICE_FACTOR } from "@/lib/ai/batch/provider";
import { sliceClock } from "@/lib/slices";
import type { AnswerTotals } from "../ports";
import type { NodeOf, NodeOutcome, NodeRuntime } from "../types";
import { aiData, answerKey, fmt, type Prepared } from "./items";

/** How many items an estimate asks the model for: the run's `sample` (carried in its trigger body), at most the list's length. */
export function estimateSample(rt: NodeRuntime, count: number): number {
  const sample = (rt.triggerBody as { estimateSample?: unknown } | undefined)?.estimateSample;
  return Math.min(count, typeof sample === "number" && sample >= 1 ? Math.floor(sample) : 3);
}

/**
 * The items an estimate asks: `sample` indices spread evenly over the list, the first and the last included, in order
 * (0, 6, 11 of 12 for 3), so the extrapolation sees the whole list, not its head. Deterministic: the same list and
 * sample ask the same items. All of them when the sample covers the list.
 */
export function sampleIndices(count: number, sample: number): number[] {
  const n = Math.min(count, sample);
  if (n <= 1) return n === 1 ? [0] : [];
  // Steps of at least 1 before rounding keep the indices distinct.
  return Array.from({ length: n }, (_, k) => Math.round((k * (count - 1)) / (n - 1)));
}

/**
 * An estimate's output: every item's request tokenized (exact for OpenAI's o200k models, else an approximation), the
 * sample's real answers and tokens, and the output tokens extrapolated from the sample's average; cost at the node's
 * prices (null when unknown). `usage` is what the sample itself cost.
 */
export async function completeEstimate(node: NodeOf<"AI">, rt: NodeRuntime, prep: Prepared, totals: AnswerTotals, usage: Record<string, unknown>): Promise<NodeOutcome> {
  const data = aiData(node);
  let inputTokens = 0;
  let exact = true;
  const clock = sliceClock();
  for (let i = 0; i < prep.count; i++) {
    if (clock.due()) await clock.yield();
    const { prompt, system } = prep.render(i);
    const counted = countCallTokens(prep.settings.provider, prep.modelId, system, prompt, data.output);
    inputTokens += counted.tokens;
    exact &&= counted.exact;
  }
  // The ledger holds the sampled items only: one read over the whole list answers them, in index order.
  const rows = await rt.ports.answers.read(answerKey(node, rt), 0, prep.count);
  const answered = rows.filter((r) => r.status === "done" && r.output);
  const averageOut = answered.length ? answered.reduce((sum, r) => sum + (r.outputTokens ?? 0), 0) / answered.length : 0;
  const outputTokens = Math.round(averageOut * prep.count);
  const estimate = {
    items: prep.count,
    inputTokens,
    outputTokens,
    costUsd: batchPrice(costOf(prep.prices, inputTokens, outputTokens), data.mode === "batch"),
    exact,
    sample: rows.map((r) => ({ index: r.itemIndex, output: r.output ?? { error: r.error }, inputTokens: r.inputTokens ?? 0, outputTokens: r.outputTokens ?? 0 })),
  };
  const cost = estimate.costUsd === null ? "cost unknown (no price for this model)" : `about $${estimate.costUsd.toFixed(4)}`;
  return {
    kind: "done",
    output: { estimate, usage },
    itemsIn: prep.count,
    itemsOut: 0,
    log: `Estimate: ${fmt(prep.count)} item(s), ${fmt(inputTokens)} input tokens${exact ? "" : " (approximate)"}, ~${fmt(outputTokens)} output tokens from ${fmt(answered.length)} sample answer(s), ${cost}; the sample used ${fmt(totals.calls)} call(s)`,
  };
}

/** A node in batch mode will be billed at the batch price (half), though its sample was asked directly. */
const batchPrice = (cost: number | null, batch: boolean) => (cost === null || !batch ? cost : cost * BATCH_PRICE_FACTOR);
