// Model usage and cost as words in a sentence, the one way the preview dialog and an estimate's view write them. Pure
// and tiny: only those views import it, and both load when shown.
import { formatCount } from "@/components/ui/format";
import { formatUsd, type AiUsage } from "./ai";

/** "1 call", "1,200 calls". */
export function formatCalls(calls: number): string {
  return `${formatCount(calls)} ${calls === 1 ? "call" : "calls"}`;
}

/** "12 calls (1,234 tokens in, 56 out, $0.0012)"; the cost reads "unknown" when no price is known. */
export function formatUsage(usage: AiUsage): string {
  return `${formatCalls(usage.calls)} (${formatCount(usage.inputTokens)} tokens in, ${formatCount(usage.outputTokens)} out, ${formatUsd(usage.costUsd)})`;
}

/** An estimated cost, "≈ $0.0123"; "unknown" when no price is known. */
export function formatEstimatedUsd(costUsd: number | null): string {
  return costUsd === null ? "unknown" : `≈ ${formatUsd(costUsd)}`;
}
