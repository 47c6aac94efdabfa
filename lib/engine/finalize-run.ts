import "server-only";
import { and, eq, inArray, sql } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import { nodeResults, runs, type RunResult } from "@/db/schema";
import { log } from "@/lib/log";
import { enqueueRunWebhooks } from "@/lib/webhooks/enqueue-run-webhooks";
import { forgetRunOutputs, markNodesSkipped } from "./node-store";
import { appendRunLog } from "./run-log";
import type { RunInfo } from "./runtime";

/**
 * Ends a run: nodes that never ran become SKIPPED, the result counters are summed from what ran, the status is
 * SUCCESS exactly when no node FAILED. Only the call that moves the run out of RUNNING sends webhooks and the wake-up.
 */
export async function finalizeRun(
  deps: { db: Db; wake: (workflowId: string) => Promise<void> },
  run: RunInfo,
  order: string[],
): Promise<{ status: "SUCCESS" | "FAILED" }> {
  const { db } = deps;
  const rows = await db
    .select({ nodeId: nodeResults.nodeId, status: nodeResults.status, error: nodeResults.error })
    .from(nodeResults)
    .where(eq(nodeResults.runId, run.runId));
  await markNodesSkipped(db, run.runId, rows.filter((r) => r.status === "PENDING" || r.status === "RUNNING").map((r) => r.nodeId));
  const failedRows = rows.filter((r) => r.status === "FAILED").sort((a, b) => order.indexOf(a.nodeId) - order.indexOf(b.nodeId));
  const status = failedRows.length > 0 ? "FAILED" : "SUCCESS";
  const error = failedRows[0] ? `Node "${failedRows[0].nodeId}" failed: ${failedRows[0].error ?? "unknown error"}` : null;
  const result = await computeResult(db, run.runId);
  const updated = await db
    .update(runs)
    .set({ status, result, error, completedAt: new Date(), heartbeatAt: null })
    .where(and(eq(runs.id, run.runId), inArray(runs.status, ["RUNNING"])))
    .returning({ id: runs.id });
  forgetRunOutputs(run.runId);
  if (updated.length === 0) return { status };
  await appendRunLog(
    db,
    run.runId,
    status === "SUCCESS" ? "info" : "error",
    status === "SUCCESS"
      ? `Run succeeded: ${result.emailsSent} email(s) sent, ${result.filteredOut} row(s) filtered out, ${result.totalRows} row(s) read`
      : `Run failed: ${error}`,
  );
  await enqueueRunWebhooks({ runId: run.runId, workflowId: run.workflowId, accountId: run.accountId, status, result, error }).catch((e) =>
    log.error("could not enqueue run webhooks", { runId: run.runId, error: e }),
  );
  await deps.wake(run.workflowId).catch((e) => log.error("wake-up failed (the sweep will repair it)", { workflowId: run.workflowId, error: e }));
  return { status };
}

/** `{ emailsSent, filteredOut, totalRows }` from what ran: the send ledger and the FILTER / DATA_SOURCE outputs. */
export async function computeResult(db: Db, runId: string): Promise<RunResult> {
  const [row] = await execRows<{ total_rows: number; filtered_out: number; emails_sent: number }>(
    db,
    sql`select
          coalesce(sum((output->>'rowCount')::int) filter (where type = 'DATA_SOURCE' and status = 'SUCCESS'), 0)::int as total_rows,
          coalesce(sum((output->>'filteredOut')::int) filter (where type = 'FILTER' and status = 'SUCCESS'), 0)::int as filtered_out,
          (select count(*) from email_sends where run_id = ${runId} and status = 'sent')::int as emails_sent
        from node_results where run_id = ${runId}`,
  );
  return { emailsSent: Number(row?.emails_sent ?? 0), filteredOut: Number(row?.filtered_out ?? 0), totalRows: Number(row?.total_rows ?? 0) };
}
