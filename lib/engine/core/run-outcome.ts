// The engine's rule for how a run ends, shared by every RunStore: pure, no I/O.
import type { NodeStatus, RunResult } from "@/lib/schemas/runs";

/**
 * SUCCESS exactly when no node FAILED and the run was not cancelled; a failed run's error names its first failed node
 * in topological order (`order`).
 */
export function runOutcome(
  nodes: { nodeId: string; status: NodeStatus; error: string | null }[],
  order: string[],
  cancelled: boolean,
): { status: "SUCCESS" | "FAILED"; error: string | null } {
  const failed = nodes.filter((n) => n.status === "FAILED").sort((a, b) => order.indexOf(a.nodeId) - order.indexOf(b.nodeId));
  if (cancelled) return { status: "FAILED", error: "Cancelled" };
  if (failed[0]) return { status: "FAILED", error: `Node "${failed[0].nodeId}" failed: ${failed[0].error ?? "unknown error"}` };
  return { status: "SUCCESS", error: null };
}

/** The run's last log line. */
export function outcomeMessage(outcome: { status: "SUCCESS" | "FAILED"; error: string | null }, result: RunResult, cancelled: boolean): string {
  if (cancelled) return `Run cancelled: ${result.emailsSent} email(s) sent before it stopped`;
  if (outcome.status === "SUCCESS") {
    return `Run succeeded: ${result.emailsSent} email(s) sent, ${result.filteredOut} row(s) filtered out, ${result.totalRows} row(s) read`;
  }
  return `Run failed: ${outcome.error}`;
}
