import "server-only";
import { and, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { Db } from "@/db/client";
import { nodeResults, type NodeStatus } from "@/db/schema";
import { mergeSpilled, readSpilledArrays, writeSpilledOutput } from "@/db/queries/node-outputs";

export type NodeRow = {
  nodeId: string;
  status: NodeStatus;
  error: string | null;
};

/**
 * Node outputs live in Postgres (the source of truth); this cache keeps the outputs of the few runs this
 * process is executing, so a FILTER over 100,000 rows does not re-read and re-parse its source from the database.
 * Outputs are immutable once written, so a cached value is never stale.
 */
const cache = new Map<string, Map<string, Record<string, unknown>>>();
const MAX_CACHED_RUNS = 8;

function cacheFor(runId: string): Map<string, Record<string, unknown>> {
  let entry = cache.get(runId);
  if (!entry) {
    if (cache.size >= MAX_CACHED_RUNS) cache.delete(cache.keys().next().value as string);
    entry = new Map();
    cache.set(runId, entry);
  }
  return entry;
}

export function forgetRunOutputs(runId: string): void {
  cache.delete(runId);
}

/**
 * Starting a run, as CTEs over `runs`, a relation of `runs` rows (id, graph, workflow_version): one PENDING row per node
 * of its graph (`ins` returns those it wrote; rows already there — a resume, or nodes a retry reused — are kept), so
 * the run shows every node, and its first log line ("started", or "resumed" when the rows were all there). Used by the
 * claim (queue.ts, the same statement) and by startRunRows.
 */
export function startRowsCtes(runs: SQL): SQL {
  return sql`ins as (
      insert into node_results (run_id, node_id, type, status)
      select c.id, n->>'id', n->>'type', 'PENDING' from ${runs} c, jsonb_array_elements(c.graph->'nodes') n
      on conflict do nothing
      returning node_id
    ), logged as (
      insert into run_logs (run_id, level, message)
      select c.id, 'info', case when exists (select 1 from ins) or jsonb_array_length(c.graph->'nodes') = 0
        then 'Run started (workflow version ' || c.workflow_version || ')' else 'Run resumed after an interruption' end
      from ${runs} c
    )`;
}

/** Starts a run that was not just claimed here (an Inngest replay, a resume): see startRowsCtes. */
export async function startRunRows(db: Db, runId: string): Promise<void> {
  await db.execute(sql`
    with r as (select id, graph, workflow_version from runs where id = ${runId}), ${startRowsCtes(sql`r`)}
    select 1`);
}

async function readNodeRow(db: Db, runId: string, nodeId: string): Promise<NodeRow | undefined> {
  const [row] = await db
    .select({ nodeId: nodeResults.nodeId, status: nodeResults.status, error: nodeResults.error })
    .from(nodeResults)
    .where(and(eq(nodeResults.runId, runId), eq(nodeResults.nodeId, nodeId)));
  return row;
}

/**
 * A finishing node's start: the row's own, or the time this process started it without writing RUNNING
 * (PgRunStore's deferred start), never later than the database's now (the app's clock may run ahead of it).
 */
function startedExpression(startedAt: Date | undefined) {
  return startedAt
    ? sql`coalesce(started_at, least(${startedAt.toISOString()}::timestamptz, now()))`
    : sql`coalesce(started_at, now())`;
}

/** A node started without its RUNNING write (PgRunStore's deferred start) that is still running: write it now. */
export async function markNodeRunning(db: Db, runId: string, nodeId: string, startedAt: Date): Promise<void> {
  await db.execute(sql`
    update node_results set status = 'RUNNING', started_at = ${startedExpression(startedAt)}
    where run_id = ${runId} and node_id = ${nodeId} and status = 'PENDING'`);
}

/**
 * Moves a node that has not finished to RUNNING in one round trip. Returns undefined when it started, or the row
 * of a node that already finished (SUCCESS/FAILED/SKIPPED: a resumed run must not execute it again).
 */
export async function startNodeRow(db: Db, runId: string, nodeId: string): Promise<NodeRow | undefined> {
  const started = await db
    .update(nodeResults)
    .set({ status: "RUNNING", startedAt: sql`coalesce(${nodeResults.startedAt}, now())`, error: null })
    .where(and(eq(nodeResults.runId, runId), eq(nodeResults.nodeId, nodeId), inArray(nodeResults.status, ["PENDING", "RUNNING"])))
    .returning({ nodeId: nodeResults.nodeId });
  if (started.length > 0) return undefined;
  return readNodeRow(db, runId, nodeId);
}

export async function markNodeSucceeded(
  db: Db,
  runId: string,
  nodeId: string,
  result: { output: Record<string, unknown>; itemsIn?: number; itemsOut?: number; logMessages: string[] },
  startedAt?: Date,
): Promise<void> {
  cacheFor(runId).set(nodeId, result.output);
  // Large arrays go to their pieces first (node-outputs.ts); the row keeps their head.
  const { inline, spilled } = await writeSpilledOutput(db, runId, nodeId, result.output);
  // The result and its log line in one round trip.
  await db.execute(sql`
    with done as (
      update node_results set status = 'SUCCESS', output = ${JSON.stringify(inline)}::jsonb,
        spilled = ${spilled ? JSON.stringify(spilled) : null}::jsonb,
        items_in = ${result.itemsIn ?? null}, items_out = ${result.itemsOut ?? null}, error = null, completed_at = now(),
        started_at = ${startedExpression(startedAt)}
      where run_id = ${runId} and node_id = ${nodeId}
      returning node_id
    )
    insert into run_logs (run_id, level, node_id, message)
    select ${runId}, 'info', done.node_id, m.message
    from done cross join jsonb_array_elements_text(${JSON.stringify(result.logMessages)}::jsonb) with ordinality as m(message, n)
    order by m.n`);
}

export async function markNodeFailed(db: Db, runId: string, nodeId: string, error: string, startedAt?: Date): Promise<void> {
  await db
    .update(nodeResults)
    .set({ status: "FAILED", error, completedAt: new Date(), startedAt: startedExpression(startedAt) })
    .where(and(eq(nodeResults.runId, runId), eq(nodeResults.nodeId, nodeId)));
}

/** Every node of the run that has not finished becomes SKIPPED (after a failure, or on a branch not taken). */
export async function markNodesSkipped(db: Db, runId: string, nodeIds: string[]): Promise<void> {
  if (nodeIds.length === 0) return;
  await db
    .update(nodeResults)
    .set({ status: "SKIPPED", completedAt: new Date() })
    .where(and(eq(nodeResults.runId, runId), inArray(nodeResults.nodeId, nodeIds), inArray(nodeResults.status, ["PENDING", "RUNNING"])));
}

/** Outputs of the given SUCCESS nodes, from the cache or Postgres. */
export async function loadOutputs(db: Db, runId: string, nodeIds: string[]): Promise<Map<string, Record<string, unknown>>> {
  const cached = cacheFor(runId);
  const out = new Map<string, Record<string, unknown>>();
  const missing: string[] = [];
  for (const id of nodeIds) {
    const hit = cached.get(id);
    if (hit) out.set(id, hit);
    else missing.push(id);
  }
  if (missing.length > 0) {
    const rows = await db
      .select({ nodeId: nodeResults.nodeId, output: nodeResults.output, spilled: nodeResults.spilled })
      .from(nodeResults)
      .where(and(eq(nodeResults.runId, runId), inArray(nodeResults.nodeId, missing), eq(nodeResults.status, "SUCCESS")));
    const withPieces = rows.flatMap((row) => (row.spilled ? [{ nodeId: row.nodeId, spilled: row.spilled }] : []));
    const arrays = withPieces.length > 0 ? await readSpilledArrays(db, runId, withPieces) : undefined;
    for (const row of rows) {
      const output = mergeSpilled(row.output ?? {}, arrays?.get(row.nodeId));
      cached.set(row.nodeId, output);
      out.set(row.nodeId, output);
    }
  }
  return out;
}
