import "server-only";
import { sql } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import type { NodeStatus, RunResult } from "@/db/schema";
import { forgetRunOutputs, markNodesSkipped } from "./node-store";
import { outcomeMessage, runOutcome } from "./run-outcome";
import type { Finalized } from "./run-store";
import type { RunInfo } from "./runtime";

/**
 * Ends a run in PostgreSQL (PgRunStore.finalize): nodes that never ran become SKIPPED, the result counters are summed
 * from what ran, the status is SUCCESS exactly when no node FAILED. `changed` is true only for the call that moves the
 * run out of RUNNING: the engine sends webhooks and the wake-up for that one alone.
 */
export async function finalizeRunRows(db: Db, run: RunInfo, order: string[], options: { cancelled?: boolean } = {}): Promise<Finalized> {
  // The node rows and the result counters in one read: { emailsSent, filteredOut, totalRows } come from the send
  // ledger and the DATA_SOURCE / FILTER outputs.
  // A retry's emails live in its chain's ledger (keyed by the chain's first run): its emailsSent counts the ledger rows
  // of the OUTPUT nodes it executed (not reused), so the last run of a chain shows what the chain delivered.
  const ledgerRunId = run.ledgerRunId ?? run.runId;
  // CONTRACT 11: the same ledger rows give `suppressed`, `duplicates` and a preview's `emailsPlanned` (one scan).
  const rows = await execRows<{ node_id: string; status: NodeStatus; error: string | null; row_count: number | null; filtered_out: number | null; emails_sent: number; suppressed: number; duplicates: number; planned: number }>(
    db,
    sql`with c as (
          select count(*) filter (where e.status = 'sent')::int as sent, count(*) filter (where e.status = 'suppressed')::int as suppressed,
            count(*) filter (where e.status = 'duplicate')::int as duplicates, count(*) filter (where e.status = 'preview')::int as planned
          from email_sends e where e.run_id = ${ledgerRunId}
             and (${ledgerRunId} = ${run.runId}
                  or e.node_id in (select x.node_id from node_results x where x.run_id = ${run.runId} and not x.reused))
        )
        select n.node_id, n.status, n.error,
          case when n.type = 'DATA_SOURCE' and n.status = 'SUCCESS' then (n.output->>'rowCount')::int end as row_count,
          case when n.type = 'FILTER' and n.status = 'SUCCESS' then (n.output->>'filteredOut')::int end as filtered_out,
          c.sent as emails_sent, c.suppressed, c.duplicates, c.planned
        from node_results n cross join c where n.run_id = ${run.runId}`,
  );
  await markNodesSkipped(db, run.runId, rows.filter((r) => r.status === "PENDING" || r.status === "RUNNING").map((r) => r.node_id));
  const cancelled = options.cancelled === true;
  const { status, error } = runOutcome(rows.map((r) => ({ nodeId: r.node_id, status: r.status, error: r.error })), order, cancelled);
  const sum = (values: (number | null)[]) => values.reduce<number>((total, v) => total + Number(v ?? 0), 0);
  const result: RunResult = {
    emailsSent: Number(rows[0]?.emails_sent ?? 0),
    filteredOut: sum(rows.map((r) => r.filtered_out)),
    totalRows: sum(rows.map((r) => r.row_count)),
    suppressed: Number(rows[0]?.suppressed ?? 0),
    duplicates: Number(rows[0]?.duplicates ?? 0),
    ...(run.mode === "preview" ? { emailsPlanned: Number(rows[0]?.planned ?? 0) } : {}),
  };
  const message = outcomeMessage({ status, error }, result, cancelled);
  // The status change, its log line, and whether the account has webhooks at all, in one round trip. Only the call
  // that moves the run out of RUNNING logs, sends webhooks and wakes the next run.
  const [done] = await execRows<{ updated: number; has_webhooks: boolean }>(
    db,
    sql`with upd as (
          update runs set status = ${status}, result = ${JSON.stringify(result)}::jsonb, error = ${error},
            completed_at = now(), heartbeat_at = null, executor_key = null
          where id = ${run.runId} and status = 'RUNNING'
          returning id
        ), logged as (
          insert into run_logs (run_id, level, message)
          select id, ${status === "SUCCESS" ? "info" : "error"}, ${message} from upd
        )
        select (select count(*) from upd)::int as updated,
          exists (select 1 from webhooks where account_id = ${run.accountId} and deleted_at is null) as has_webhooks`,
  );
  forgetRunOutputs(run.runId);
  return { status, result, error, changed: Number(done?.updated ?? 0) > 0, hasWebhooks: done?.has_webhooks === true };
}
