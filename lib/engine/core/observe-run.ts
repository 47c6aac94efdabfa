import "server-only";
import type { GraphNode } from "@/lib/graph/schema";
import { withLogContext } from "@/lib/log";
import { metrics } from "@/lib/observability/metrics";
import { contextFromTraceparent } from "@/lib/observability/trace-context";
import { annotateActiveSpan, tracingEnabled, withSpan } from "@/lib/observability/tracing";
import type { RunInfo } from "./runtime";

/** How one execution of a run ended: finalized (`changed`: by this call), or handed back still RUNNING. */
export type RunEnd = { status: "SUCCESS" | "FAILED"; changed: boolean } | { status: "released" };

/**
 * One execution of a run, observed: its log lines carry the run's ids, its `run` span (a child of the trace the run was
 * enqueued in) covers claim to finalize. `execute` gets the start time for the finished-runs metrics (runFinishedMetric).
 */
export async function observeRun(run: RunInfo, execute: (started: number) => Promise<RunEnd>): Promise<RunEnd> {
  const started = performance.now();
  return withLogContext({ runId: run.runId, workflowId: run.workflowId, accountId: run.accountId }, () =>
    tracingEnabled()
      ? withSpan(
          "run",
          { "flowmail.run.id": run.runId, "flowmail.workflow.id": run.workflowId, "flowmail.run.trigger": run.trigger ?? "manual", "flowmail.run.mode": run.mode ?? "live" },
          async (span) => {
            const outcome = await execute(started);
            span?.setAttribute("flowmail.run.status", outcome.status === "released" ? "RUNNING" : outcome.status);
            return outcome;
          },
          contextFromTraceparent(run.traceparent),
        )
      : execute(started),
  );
}

/** The finished-runs counter and duration histogram, for the call that finalized the run (`started`: performance.now()). */
export function runFinishedMetric(run: RunInfo, status: "SUCCESS" | "FAILED", started: number): void {
  metrics.runFinished(status, run.trigger, (performance.now() - started) / 1000);
}

/** One node of a run, observed: a `node` span (type, status, items in and out) and `nodeId` on its log lines. */
export function observeNode<T extends { status: string }>(node: GraphNode, execute: () => Promise<T>): Promise<T> {
  return withLogContext({ nodeId: node.id }, () =>
    withSpan("node", { "flowmail.node.id": node.id, "flowmail.node.type": node.type }, async (span) => {
      const summary = await execute();
      span?.setAttribute("flowmail.node.status", summary.status);
      return summary;
    }),
  );
}

/** A node's item counts on its `node` span (called where the node's outcome is recorded). */
export function noteNodeItems(itemsIn: number | undefined, itemsOut: number | undefined): void {
  annotateActiveSpan({
    ...(itemsIn !== undefined ? { "flowmail.node.items_in": itemsIn } : {}),
    ...(itemsOut !== undefined ? { "flowmail.node.items_out": itemsOut } : {}),
  });
}
