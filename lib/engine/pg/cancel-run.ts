import "server-only";
import { sql } from "drizzle-orm";
import { execRows, getDb } from "@/db/client";
import type { RunStatus } from "@/db/schema";
import { afterResponse, wakeWorkflow } from "../drivers/wake";
import { AppError, notFound } from "@/lib/errors";
import { enqueueRunWebhooks } from "@/lib/webhooks/enqueue-run-webhooks";

export type CancelledRun = { runId: string; workflowId: string; status: RunStatus; cancelRequested: boolean };

/**
 * POST /api/workflows/runs/:runId/cancel. A PENDING run becomes FAILED "Cancelled" at once (its nodes
 * SKIPPED). A RUNNING run is marked; its executor stops before the next node or email batch (≤ 5 s), skips the
 * unfinished nodes and finalizes it FAILED "Cancelled", which wakes the workflow's next run. Cancelling a RUNNING run
 * twice answers the same 202; a finished run answers 409 `run_finished`.
 */
export async function cancelRun(accountId: string, runId: string): Promise<CancelledRun> {
  const db = await getDb();
  // One statement: whichever of PENDING / RUNNING the row is in when it is locked decides the branch.
  const [row] = await execRows<{ status: RunStatus; workflow_id: string; was: RunStatus; has_webhooks: boolean }>(
    db,
    sql`with target as (
          select id, status, workflow_id from runs where id = ${runId} and account_id = ${accountId} for update
        ), pending as (
          update runs r set status = 'FAILED', error = 'Cancelled', completed_at = now(), cancel_requested_at = now()
          from target t where r.id = t.id and t.status = 'PENDING'
          returning r.id
        ), running as (
          update runs r set cancel_requested_at = coalesce(r.cancel_requested_at, now())
          from target t where r.id = t.id and t.status = 'RUNNING'
          returning r.id
        )
        select case when exists (select 1 from pending) then 'FAILED' else t.status end as status, t.status as was,
          t.workflow_id,
          exists (select 1 from webhooks w where w.account_id = ${accountId} and w.deleted_at is null) as has_webhooks
        from target t`,
  );
  if (!row) throw notFound("Run");
  if (row.was === "SUCCESS" || row.was === "FAILED") {
    throw new AppError("run_finished", `This run already finished (${row.was}); only PENDING and RUNNING runs can be cancelled.`);
  }
  if (row.was === "PENDING") {
    await db.execute(sql`
      with graph_nodes as (
        select n->>'id' as id, n->>'type' as type from runs, jsonb_array_elements(graph->'nodes') n where runs.id = ${runId}
      ), skipped as (
        insert into node_results (run_id, node_id, type, status, completed_at)
        select ${runId}, id, type, 'SKIPPED', now() from graph_nodes
        on conflict do nothing
      )
      insert into run_logs (run_id, level, message) values (${runId}, 'error', 'Run cancelled before it started')`);
    const result = { emailsSent: 0, filteredOut: 0, totalRows: 0 };
    await db.execute(sql`update runs set result = ${JSON.stringify(result)}::jsonb where id = ${runId}`);
    if (row.has_webhooks) {
      await enqueueRunWebhooks({ runId, workflowId: row.workflow_id, accountId, status: "FAILED", result, error: "Cancelled" });
    }
    // The cancelled run may have been the head of the queue: nothing waits on it, but a wake-up costs nothing.
    afterResponse("wake-up after a cancel", () => wakeWorkflow(row.workflow_id), { workflowId: row.workflow_id });
  }
  return { runId, workflowId: row.workflow_id, status: row.status, cancelRequested: true };
}
