import "server-only";
import { sql, type SQL } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import { namedUploadsJson } from "@/db/queries/upload-rows";
import type { Graph } from "@/lib/graph/schema";
import { getConfig } from "@/lib/config";
import { EXECUTOR_GONE, executorKey } from "./executor-lock";
import { startRowsCtes } from "./node-store";
import type { RunInfo } from "../core/runtime";
import { runMemory } from "./run-memory";
import { RUN_COLUMNS, runFromRow, type RunRow } from "./run-row";

/**
 * Seconds without a heartbeat after which a RUNNING run is taken to belong to a dead (or stuck) process. On PostgreSQL a
 * dead embedded executor is noticed at once instead, by its vanished advisory lock (executor-lock.ts): this window is
 * only the backstop for a process that is alive but stuck.
 */
export const STALE_HEARTBEAT_SECONDS = 60;
export const HEARTBEAT_INTERVAL_MS = 10_000;

type ClaimedRun = { runId: string; workflowId: string };

/** The claimed run's snapshot, read by the claim itself (the embedded executor; an Inngest step result stays small). */
export type ClaimedRunInfo = ClaimedRun & { accountId: string; graph: Graph; version: number; cancelRequested: boolean; freshNodes: string[] } & Omit<RunInfo, "runId" | "workflowId" | "accountId" | "graph"> & {
  /** With `uploads` asked for: the uploads its DATA_SOURCE nodes name, as namedUploadsJson reads them (UploadPrefetch). */
  uploads?: unknown;
};

/** What a claim reads besides the run: `uploads`, the uploads its DATA_SOURCE nodes name (db/queries/upload-rows.ts). */
export type ClaimOptions = { uploads?: boolean };

/**
 * Claims the oldest PENDING run (lowest seq) of the workflow, only while no run of that workflow is RUNNING.
 * One atomic UPDATE: two claimers racing for the same row serialize on its row lock and the loser's re-check
 * of `status = 'PENDING'` fails; the unique partial index `runs_one_running_per_workflow` rejects any other
 * interleaving, which we read as "busy". Returns null when the workflow is busy or its queue is empty.
 */
export async function claimNextRun(db: Db, workflowId: string): Promise<ClaimedRun | null> {
  const row = await claim(db, workflowId, sql`id, heartbeat_at::text as beat`);
  return row ? { runId: row.id, workflowId } : null;
}

/**
 * `claimNextRun` that also returns the run's snapshot and starts it, in the same statement: one PENDING node row per
 * node (kept when already there: the nodes a retry reused) and the run's first log line — what `startRunRows` does
 * for a run that was not just claimed. One round trip where the executor made three.
 */
export async function claimNextRunWithInfo(db: Db, workflowId: string, options: ClaimOptions = {}): Promise<ClaimedRunInfo | null> {
  const row = await claim<RunRow & { cancel_requested: boolean; fresh_nodes?: string[] }>(db, workflowId, CLAIM_INFO_COLUMNS, { start: true, uploads: options.uploads });
  return row ? claimInfoFromRow(row) : null;
}

/** What every claim returns (the id and the heartbeat it wrote), plus the columns the caller asked for. */
type ClaimRow = { id: string; beat: string };

/** The columns claimNextRunWithInfo reads with the claim. */
const CLAIM_INFO_COLUMNS = sql`${sql.raw(RUN_COLUMNS)}, heartbeat_at::text as beat, cancel_requested_at is not null as cancel_requested`;
type ClaimInfoRow = ClaimRow & RunRow & { cancel_requested: boolean; fresh_nodes?: string[]; uploads?: unknown };

function claimInfoFromRow(row: ClaimInfoRow): ClaimedRunInfo {
  const info: ClaimedRunInfo = { ...runFromRow(row), cancelRequested: row.cancel_requested === true, freshNodes: row.fresh_nodes ?? [] };
  if (row.uploads !== undefined) info.uploads = row.uploads;
  return info;
}

/**
 * The error of a run whose workflow was deleted before it started (deleteWorkflow fails the PENDING runs it sees;
 * a claim fails any that appear later: a run inserted by a path that did not lock the workflow row).
 */
export const WORKFLOW_DELETED_RUN_ERROR = "Workflow deleted";

/**
 * The UPDATE that moves the workflow's oldest PENDING run to RUNNING for this process (see claimNextRun). A deleted
 * workflow's run is never claimed: `goneCte` fails those runs instead, in the same statement.
 */
function claimUpdate(workflowId: string, returning: SQL, options: { finishing?: string; gate?: SQL } = {}): SQL {
  // `finishing`: a run of the workflow that the same statement moves out of RUNNING (claim-ahead, below).
  const others = options.finishing ? sql` and x.id <> ${options.finishing}` : sql``;
  return sql`update runs set status = 'RUNNING', started_at = coalesce(started_at, now()), heartbeat_at = now(),
            executor_key = ${executorKey()}, email_identity = ${emailIdentitySql()}
          where id = (
            select r.id from runs r
            where r.workflow_id = ${workflowId} and r.status = 'PENDING'
              and not exists (select 1 from runs x where x.workflow_id = ${workflowId} and x.status = 'RUNNING'${others})
              and not exists (select 1 from workflows w where w.id = ${workflowId} and w.deleted_at is not null)
              ${options.gate ? sql`and ${options.gate}` : sql``}
            order by r.seq
            limit 1
          ) and status = 'PENDING'
          returning ${returning}`;
}

/**
 * Claim-ahead (the embedded executor): CTEs for the statement that finishes run `finishing` of the workflow
 * (its UPDATE is the CTE named in `gate`, which must return a row when the run was moved out of RUNNING): they claim
 * and start the workflow's next run in the same statement (`claimed`, and startRowsCtes' `ins` and `logged`), as
 * claimNextRunWithInfo would right after. `gate` makes PostgreSQL finish the run first, so the unique index of one
 * RUNNING run per workflow never sees two. Read the result with claimAheadColumns / claimAheadResult.
 */
export function claimAheadCtes(workflowId: string, finishing: string, gate: SQL): SQL {
  return sql`claimed as (${claimUpdate(workflowId, CLAIM_INFO_COLUMNS, { finishing, gate })}), ${startRowsCtes(sql`claimed`)}`;
}

/** The select list that goes with claimAheadCtes. */
export function claimAheadColumns(workflowId: string, options: ClaimOptions = {}): SQL {
  return sql`(select row_to_json(c) from claimed c) as ahead, array(select node_id from ins) as ahead_fresh,
    exists (select 1 from runs p where p.workflow_id = ${workflowId} and p.status = 'PENDING') as ahead_pending${
      options.uploads ? sql`, ${namedUploadsJson(sql`claimed`)} as ahead_uploads` : sql``}`;
}

/**
 * What a claim-ahead found: the next run, claimed and started (as claimNextRunWithInfo returns it); "empty" when the
 * workflow had no PENDING run when the statement began (an enqueue committed later wakes the workflow itself); or
 * undefined: PENDING runs were there but none was claimed (a claim must be tried as usual).
 */
export function claimAheadResult(
  row: { ahead?: unknown; ahead_fresh?: string[]; ahead_pending?: boolean; ahead_uploads?: unknown } | undefined,
): ClaimedRunInfo | "empty" | undefined {
  if (!row) return undefined;
  if (row.ahead) {
    const claimed = (typeof row.ahead === "string" ? JSON.parse(row.ahead) : row.ahead) as ClaimInfoRow;
    runMemory().noteOwnBeat(claimed.id, claimed.beat);
    return claimInfoFromRow({ ...claimed, fresh_nodes: row.ahead_fresh ?? [], uploads: row.ahead_uploads });
  }
  return row.ahead_pending === true ? undefined : "empty";
}

/**
 * Fails the workflow's PENDING runs when the workflow is deleted. Its condition is the claim's negated, read in the
 * same snapshot, so in one statement the two never touch the same row.
 */
function goneCte(workflowId: string): SQL {
  return sql`gone as (
    update runs set status = 'FAILED', error = ${WORKFLOW_DELETED_RUN_ERROR}, completed_at = now()
    where workflow_id = ${workflowId} and status = 'PENDING'
      and exists (select 1 from workflows w where w.id = ${workflowId} and w.deleted_at is not null)
    returning id
  )`;
}

/**
 * What a claimed run's emails are built with: kept once set; a retry takes its chain's first run's; otherwise this
 * instance's APP_URL and EMAIL_FROM, and the account's default sender now (null: none).
 */
function emailIdentitySql(): SQL {
  const config = getConfig();
  const own = JSON.stringify({ appUrl: config.appUrl, from: config.emailFrom });
  return sql`coalesce(runs.email_identity, (select root.email_identity from runs root where root.id = runs.chain_root_id),
    ${own}::jsonb || jsonb_build_object('defaultSenderId', (select s.id from senders s where s.account_id = runs.account_id and s.is_default)))`;
}

async function claim<Extra = object>(
  db: Db,
  workflowId: string,
  returning: SQL,
  options: { start?: boolean } & ClaimOptions = {},
): Promise<(ClaimRow & Extra) | null> {
  const update = claimUpdate(workflowId, returning);
  try {
    const rows = await execRows<ClaimRow & Extra>(
      db,
      options.start
        ? sql`with ${goneCte(workflowId)}, claimed as (${update}), ${startRowsCtes(sql`claimed`)}
            select claimed.*, array(select node_id from ins) as fresh_nodes${options.uploads ? sql`, ${namedUploadsJson(sql`claimed`)} as uploads` : sql``}
            from claimed`
        : sql`with ${goneCte(workflowId)} ${update}`,
    );
    if (rows[0]) runMemory().noteOwnBeat(rows[0].id, rows[0].beat);
    return rows[0] ?? null;
  } catch (error) {
    if (isUniqueViolation(error)) return null;
    throw error;
  }
}

export function isUniqueViolation(error: unknown): boolean {
  for (let e: unknown = error; e; e = (e as { cause?: unknown }).cause) {
    if ((e as { code?: string }).code === "23505") return true;
  }
  return false;
}

/**
 * Keeps the claim alive; returns false when the run is no longer RUNNING or no longer this process's (finished,
 * released, or taken over after this process's lock session was lost).
 */
export async function heartbeat(db: Db, runId: string): Promise<boolean> {
  const rows = await execRows<{ beat: string }>(
    db,
    sql`update runs set heartbeat_at = now()
        where id = ${runId} and status = 'RUNNING' and executor_key is not distinct from ${executorKey()}::int4
        returning heartbeat_at::text as beat`,
  );
  if (rows[0]) runMemory().noteOwnBeat(runId, rows[0].beat);
  return rows.length > 0;
}

/**
 * Re-confirms that a run this process was executing is still its own before resuming it after a lost database: one
 * compare-and-set on the heartbeat it last wrote. False when the run finished, or another process took it over (or
 * this process has no record of it): then it must not be executed here.
 */
export async function reclaimOwnRun(db: Db, runId: string): Promise<boolean> {
  const last = runMemory().ownBeats.get(runId);
  if (last === undefined) return false;
  const rows = await execRows<{ beat: string }>(
    db,
    sql`update runs set heartbeat_at = now()
        where id = ${runId} and status = 'RUNNING' and heartbeat_at = ${last}::timestamptz
        returning heartbeat_at::text as beat`,
  );
  if (!rows[0]) {
    runMemory().ownBeats.delete(runId);
    return false;
  }
  runMemory().noteOwnBeat(runId, rows[0].beat);
  return true;
}

/**
 * Takes over a RUNNING run whose executor is gone: its lock session ended (killed, restarted), it handed the run back
 * (SIGTERM: no heartbeat), or it stopped beating. The conditional update makes the takeover exclusive: of two
 * sweepers only one still sees the run orphaned.
 */
export async function takeOverStaleRun(db: Db, runId: string, staleSeconds = STALE_HEARTBEAT_SECONDS): Promise<boolean> {
  const rows = await execRows<{ beat: string }>(
    db,
    sql`update runs r set heartbeat_at = now(), executor_key = ${executorKey()}::int4
        where r.id = ${runId} and r.status = 'RUNNING' and ${orphaned(staleSeconds)}
        returning r.heartbeat_at::text as beat`,
  );
  if (rows[0]) runMemory().noteOwnBeat(runId, rows[0].beat);
  return rows.length > 0;
}

/** Workflows with PENDING runs and none RUNNING: their wake-up may have been lost. */
export async function workflowsNeedingWake(db: Db, limit = 500): Promise<string[]> {
  const rows = await execRows<{ workflow_id: string }>(
    db,
    sql`select distinct p.workflow_id from runs p
        where p.status = 'PENDING'
          and not exists (select 1 from runs x where x.workflow_id = p.workflow_id and x.status = 'RUNNING')
        limit ${limit}`,
  );
  return rows.map((r) => r.workflow_id);
}

/** A RUNNING run (aliased `r`) that no live executor holds. */
function orphaned(staleSeconds: number): SQL {
  return sql`(r.heartbeat_at is null or r.heartbeat_at < now() - make_interval(secs => ${staleSeconds}) or ${sql.raw(EXECUTOR_GONE)})`;
}

/** RUNNING runs that no live executor holds (see takeOverStaleRun). */
export async function staleRunningRuns(db: Db, staleSeconds = STALE_HEARTBEAT_SECONDS): Promise<ClaimedRun[]> {
  const rows = await execRows<{ id: string; workflow_id: string }>(
    db,
    sql`select r.id, r.workflow_id from runs r
        where r.status = 'RUNNING' and ${orphaned(staleSeconds)}
        order by r.seq limit 100`,
  );
  return rows.map((r) => ({ runId: r.id, workflowId: r.workflow_id }));
}
