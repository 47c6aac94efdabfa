import "server-only";
import { runAiTotals, runEstimate } from "./answer-ledger";
import { sql, type SQL } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import type { NodeStatus, RunResult } from "@/db/schema";
import { heldCtes, isEmptyBatch, type HeldBatch } from "./buffered-writes";
import { forgetRunOutputs } from "./node-store";
import { claimAheadColumns, claimAheadCtes, claimAheadResult, type ClaimedRunInfo } from "./queue";
import { outcomeMessage, runOutcome } from "../core/run-outcome";
import type { Finalized } from "../core/run-store";
import type { RunInfo } from "../core/runtime";

type FinalizeOptions = {
  cancelled?: boolean;
  /** What the run store held back for this run (buffered-writes.ts): written by the first statement, which reads it. */
  held?: HeldBatch;
  /** Claim and start the workflow's next run in the statement that finishes this one (queue.ts, claimAheadCtes). */
  claimAhead?: boolean;
  /** With claimAhead: also read the uploads the next run's DATA_SOURCE nodes name (queue.ts ClaimOptions). */
  claimAheadUploads?: boolean;
};

/**
 * Ends a run in PostgreSQL (PgRunStore.finalize): nodes that never ran become SKIPPED, the result counters are summed
 * from what ran, the status is SUCCESS exactly when no node FAILED. `changed` is true only for the call that moves the
 * run out of RUNNING: the engine sends webhooks and the wake-up for that one alone. Two statements: the read (which
 * first writes what the store held back) and the write (skipped nodes, the status and its log line, and with
 * `claimAhead` the workflow's next run claimed: `ahead`, see claimAheadResult).
 */
export async function finalizeRunRows(
  db: Db,
  run: RunInfo,
  order: string[],
  options: FinalizeOptions = {},
): Promise<Finalized & { ahead?: ClaimedRunInfo | "empty" }> {
  // The node rows and the result counters in one read: { emailsSent, filteredOut, totalRows } come from the send
  // ledger and the DATA_SOURCE / FILTER outputs.
  // A retry's emails live in its chain's ledger (keyed by the chain's first run): its emailsSent counts the ledger rows
  // of the OUTPUT nodes it executed (not reused), so the last run of a chain shows what the chain delivered.
  const ledgerRunId = run.ledgerRunId ?? run.runId;
  const held = options.held && !isEmptyBatch(options.held) ? options.held : undefined;
  // Held successes are written by this statement, which cannot see its own writes: their rows come from held_done.
  const nodes: SQL = held
    ? sql`(select n.node_id, n.status, n.error,
            case when n.type = 'DATA_SOURCE' and n.status = 'SUCCESS' then (n.output->>'rowCount')::int end as row_count,
            case when n.type = 'FILTER' and n.status = 'SUCCESS' then (n.output->>'filteredOut')::int end as filtered_out
          from node_results n where n.run_id = ${run.runId} and n.node_id not in (select node_id from held_done)
          union all
          select h.node_id, h.status, h.error, h.row_count, h.filtered_out from held_done h)`
    : sql`(select n.node_id, n.status, n.error,
            case when n.type = 'DATA_SOURCE' and n.status = 'SUCCESS' then (n.output->>'rowCount')::int end as row_count,
            case when n.type = 'FILTER' and n.status = 'SUCCESS' then (n.output->>'filteredOut')::int end as filtered_out
          from node_results n where n.run_id = ${run.runId})`;
  // the same ledger rows give `suppressed`, `duplicates` and a preview's `emailsPlanned` (one scan).
  const rows = await execRows<FinalRow>(
    db,
    sql`with ${held ? sql`${heldCtes(run.runId, held)}, ` : sql``}c as (
          select count(*) filter (where e.status = 'sent')::int as sent, count(*) filter (where e.status = 'suppressed')::int as suppressed,
            count(*) filter (where e.status = 'duplicate')::int as duplicates, count(*) filter (where e.status = 'preview')::int as planned,
            count(*) filter (where e.status = 'failed')::int as failed, count(*) filter (where e.status = 'unknown')::int as unknown
          from email_sends e where e.run_id = ${ledgerRunId}
             and (${ledgerRunId} = ${run.runId}
                  or e.node_id in (select x.node_id from node_results x where x.run_id = ${run.runId} and not x.reused))
        )
        select n.node_id, n.status, n.error, n.row_count, n.filtered_out,
          c.sent as emails_sent, c.suppressed, c.duplicates, c.planned, c.failed, c.unknown
        from ${nodes} n cross join c`,
  );
  return finishFromRows(db, run, order, rows, { ...options, held: undefined }); // the read wrote what was held
}

/** A node row as finalize reads it, with the run's ledger counts beside it (the same on every row). */
export type FinalRow = {
  node_id: string;
  status: NodeStatus;
  error: string | null;
  row_count: number | null;
  filtered_out: number | null;
  emails_sent: number;
  suppressed: number;
  duplicates: number;
  planned: number;
  /** Emails refused for good, and SMTP/SES emails of unknown fate (absent: none). */
  failed?: number;
  unknown?: number;
};

/**
 * Finalize's write from the node rows and ledger counts: the read's (finalizeRunRows), or those the inline store knows
 * without a read (PgRunStore.finalize, a run whose every node it executed) — then `options.held` goes in this statement.
 */
export async function finishFromRows(
  db: Db,
  run: RunInfo,
  order: string[],
  rows: FinalRow[],
  options: FinalizeOptions = {},
): Promise<Finalized & { ahead?: ClaimedRunInfo | "empty" }> {
  const held = options.held && !isEmptyBatch(options.held) ? options.held : undefined;
  const unfinished = rows.filter((r) => r.status === "PENDING" || r.status === "RUNNING").map((r) => r.node_id);
  const cancelled = options.cancelled === true;
  const { status, error } = runOutcome(rows.map((r) => ({ nodeId: r.node_id, status: r.status, error: r.error })), order, cancelled);
  const sum = (values: (number | null)[]) => values.reduce<number>((total, v) => total + Number(v ?? 0), 0);
  // Runs with AI nodes add what their model calls used (one more read, only for them).
  const ai = run.graph.nodes.some((n) => n.type === "AI") ? await runAiTotals(db, run.ledgerRunId ?? run.runId) : undefined;
  // A success the store still holds is written by the statement below: its output is read from what is held.
  const estimate = run.mode === "estimate" ? await runEstimate(db, run.runId, held?.successes) : undefined;
  const result: RunResult = {
    emailsSent: Number(rows[0]?.emails_sent ?? 0),
    filteredOut: sum(rows.map((r) => r.filtered_out)),
    totalRows: sum(rows.map((r) => r.row_count)),
    suppressed: Number(rows[0]?.suppressed ?? 0),
    duplicates: Number(rows[0]?.duplicates ?? 0),
    ...(run.mode === "preview" ? { emailsPlanned: Number(rows[0]?.planned ?? 0) } : {}),
    ...(ai ? { ai } : {}),
    ...(Number(rows[0]?.failed ?? 0) > 0 ? { failed: Number(rows[0]?.failed) } : {}),
    ...(Number(rows[0]?.unknown ?? 0) > 0 ? { unknown: Number(rows[0]?.unknown) } : {}),
    ...(estimate ? { estimate } : {}),
  };
  const message = outcomeMessage({ status, error }, result, cancelled);
  const level = status === "SUCCESS" ? "info" : "error";
  // Nodes that never ran become SKIPPED, the status changes with its log line, and whether the account has webhooks
  // at all is read, in one round trip. Only the call that moves the run out of RUNNING logs, sends webhooks and wakes.
  const skipped = unfinished.length > 0
    ? sql`skipped as (
          update node_results set status = 'SKIPPED', completed_at = now()
          where run_id = ${run.runId} and node_id in (select jsonb_array_elements_text(${JSON.stringify(unfinished)}::jsonb))
            and status in ('PENDING', 'RUNNING')
        ), `
    : sql``;
  const [done] = await execRows<{ updated: number; has_webhooks: boolean; ahead?: unknown; ahead_fresh?: string[]; ahead_pending?: boolean; ahead_uploads?: unknown }>(
    db,
    sql`with ${skipped}upd as (
          update runs set status = ${status}, result = ${JSON.stringify(result)}::jsonb, error = ${error},
            completed_at = now(), heartbeat_at = null, executor_key = null
          where id = ${run.runId} and status = 'RUNNING'
          returning id
        ), ${held
          ? heldCtes(run.runId, held, { level, message, when: sql`exists (select 1 from upd)` })
          : sql`run_logged as (
          insert into run_logs (run_id, level, message)
          select id, ${level}, ${message} from upd
        )`}${options.claimAhead ? sql`, ${claimAheadCtes(run.workflowId, run.runId, sql`exists (select 1 from upd)`)}` : sql``}
        select (select count(*) from upd)::int as updated,
          exists (select 1 from webhooks where account_id = ${run.accountId} and deleted_at is null) as has_webhooks
          ${options.claimAhead ? sql`, ${claimAheadColumns(run.workflowId, { uploads: options.claimAheadUploads })}` : sql``}`,
  );
  forgetRunOutputs(run.runId);
  const changed = Number(done?.updated ?? 0) > 0;
  return {
    status,
    result,
    error,
    changed,
    hasWebhooks: done?.has_webhooks === true,
    ...(options.claimAhead && changed ? { ahead: claimAheadResult(done) } : {}),
  };
}
