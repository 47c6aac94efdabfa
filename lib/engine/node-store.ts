import "server-only";
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { nodeResults, type NodeStatus } from "@/db/schema";

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

/** One PENDING row per node, so a freshly claimed run shows every node. */
export async function initNodeRows(db: Db, runId: string, nodes: { id: string; type: string }[]): Promise<number> {
  if (nodes.length === 0) return 0;
  const inserted = await db
    .insert(nodeResults)
    .values(nodes.map((n) => ({ runId, nodeId: n.id, type: n.type, status: "PENDING" as const })))
    .onConflictDoNothing()
    .returning({ nodeId: nodeResults.nodeId });
  return inserted.length;
}

export async function readNodeRow(db: Db, runId: string, nodeId: string): Promise<NodeRow | undefined> {
  const [row] = await db
    .select({ nodeId: nodeResults.nodeId, status: nodeResults.status, error: nodeResults.error })
    .from(nodeResults)
    .where(and(eq(nodeResults.runId, runId), eq(nodeResults.nodeId, nodeId)));
  return row;
}

export async function markNodeRunning(db: Db, runId: string, nodeId: string): Promise<void> {
  await db
    .update(nodeResults)
    .set({ status: "RUNNING", startedAt: sql`coalesce(${nodeResults.startedAt}, now())`, error: null })
    .where(and(eq(nodeResults.runId, runId), eq(nodeResults.nodeId, nodeId)));
}

export async function markNodeSucceeded(
  db: Db,
  runId: string,
  nodeId: string,
  result: { output: Record<string, unknown>; itemsIn?: number; itemsOut?: number },
): Promise<void> {
  cacheFor(runId).set(nodeId, result.output);
  await db
    .update(nodeResults)
    .set({
      status: "SUCCESS",
      output: result.output,
      itemsIn: result.itemsIn ?? null,
      itemsOut: result.itemsOut ?? null,
      error: null,
      completedAt: new Date(),
    })
    .where(and(eq(nodeResults.runId, runId), eq(nodeResults.nodeId, nodeId)));
}

export async function markNodeFailed(db: Db, runId: string, nodeId: string, error: string): Promise<void> {
  await db
    .update(nodeResults)
    .set({ status: "FAILED", error, completedAt: new Date(), startedAt: sql`coalesce(${nodeResults.startedAt}, now())` })
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
      .select({ nodeId: nodeResults.nodeId, output: nodeResults.output })
      .from(nodeResults)
      .where(and(eq(nodeResults.runId, runId), inArray(nodeResults.nodeId, missing), eq(nodeResults.status, "SUCCESS")));
    for (const row of rows) {
      const output = row.output ?? {};
      cached.set(row.nodeId, output);
      out.set(row.nodeId, output);
    }
  }
  return out;
}
