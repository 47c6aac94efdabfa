import "server-only";
import { costOf, pricesFor, type Prices } from "@/lib/ai/prices";
import type { AiSettings } from "@/lib/ai/settings";
import type { LedgerKey } from "../ports";
import { NodeError, type NodeRuntime } from "../types";
import { fmt } from "./items";

/**
 * The spend caps of an AI node: `maxCostUsd` (this node, in one run) and the account's `maxCostPerRunUsd` (every AI
 * node of the run). Checked before every call against the cost recorded so far plus the call's input; the run's cost is
 * its retry chain's (the ledger's), so a retry continues from what was paid.
 */
export type Caps = { node: number | null; run: number | null };

type Tally = { node: number; run: number };
/** Cost recorded by this node's calls in this process, on top of the ledger's figure read at each batch start. */
const tallies = new WeakMap<NodeRuntime, Tally>();

export function capsOf(settings: AiSettings, maxCostUsd: number | undefined): Caps {
  return { node: maxCostUsd ?? null, run: settings.maxCostPerRunUsd ?? null };
}

/** A cap cannot be checked without a price: the node fails before any call. */
export function assertPriced(caps: Caps, prices: Prices, modelId: string): void {
  if ((caps.node === null && caps.run === null) || (prices.input !== null && prices.output !== null)) return;
  throw new NodeError(
    `The AI spend cap cannot be checked: no price is known for the model "${modelId}". Set inputPricePerMillion and outputPricePerMillion under Settings → AI provider, or remove the cap.`,
  );
}

export async function loadTally(rt: NodeRuntime, key: LedgerKey): Promise<Tally> {
  const spent = await rt.ports.answers.spent(key);
  const tally = tallies.get(rt) ?? { node: 0, run: 0 };
  tally.node = Math.max(tally.node, spent.node);
  tally.run = Math.max(tally.run, spent.run);
  tallies.set(rt, tally);
  return tally;
}

export function addSpend(rt: NodeRuntime, cost: number | null): void {
  const tally = tallies.get(rt);
  if (!tally || cost === null) return;
  tally.node += cost;
  tally.run += cost;
}

/** The cap the next call would pass (its input at `inputTokens`), or null. */
export function capReached(rt: NodeRuntime, caps: Caps, prices: Prices, inputTokens: number): number | null {
  const tally = tallies.get(rt);
  if (!tally || (caps.node === null && caps.run === null)) return null;
  const next = costOf(prices, inputTokens, 0) ?? 0;
  if (caps.node !== null && tally.node + next > caps.node) return caps.node;
  if (caps.run !== null && tally.run + next > caps.run) return caps.run;
  return null;
}

export function capSentence(cap: number, done: number, total: number): string {
  return `The AI spend cap of $${cap.toFixed(2)} for this run was reached after ${fmt(done)} of ${fmt(total)} items. Raise it and retry the run; finished items will not be asked again.`;
}

export { pricesFor };
