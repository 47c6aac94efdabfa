import "server-only";
import { sql } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import { finalizeRunRows } from "./finalize-run";
import { log } from "@/lib/log";
import { loadOutputs, markNodeFailed, markNodeRunning, markNodesSkipped, markNodeSucceeded, startNodeRow, startRunRows } from "./node-store";
import { claimNextRunWithInfo, heartbeat } from "./queue";
import { noteClaimed, releaseRun, stopReason } from "./run-control";
import { appendRunLog } from "./run-log";
import type { RunStore, StoredRun } from "./run-store";
import { RUN_COLUMNS, runFromRow, type RunRow } from "./runtime";

/** How long a started node may run before its RUNNING status is written (the canvas shows it from then on). */
export const DEFERRED_RUNNING_MS = 250;

/**
 * The product's RunStore: node rows, outputs, logs and the run's status in PostgreSQL (or PGlite). Claims, heartbeats
 * and takeovers follow queue.ts (one atomic UPDATE each, ownership by executor key and heartbeat).
 */
export class PgRunStore implements RunStore {
  /**
   * Nodes whose PENDING row the claim has just written (`runId:nodeId`): starting one needs no read (nothing else writes
   * a claimed run's node rows), so the RUNNING write of a node without batches is deferred — made only if it is still
   * running after DEFERRED_RUNNING_MS, else folded into its finishing write (`started`). Saves a round trip per node.
   */
  private readonly fresh = new Set<string>();
  private readonly started = new Map<string, { at: Date; timer: NodeJS.Timeout }>();

  constructor(readonly db: Db) {}

  async claimNext(workflowId: string) {
    const claimed = await claimNextRunWithInfo(this.db, workflowId);
    if (!claimed) return null;
    noteClaimed(claimed.runId, claimed.cancelRequested);
    for (const nodeId of claimed.freshNodes) this.fresh.add(`${claimed.runId}:${nodeId}`);
    return { ...claimed, status: "RUNNING", started: true, claimed: true as const };
  }

  async loadRun(runId: string): Promise<StoredRun | undefined> {
    const [row] = await execRows<RunRow & { status: string }>(
      this.db,
      sql`select ${sql.raw(RUN_COLUMNS)}, status from runs where id = ${runId}`,
    );
    return row ? { ...runFromRow(row), status: row.status } : undefined;
  }

  startRun(run: StoredRun) {
    return startRunRows(this.db, run.runId);
  }

  async startNode(runId: string, nodeId: string, options: { deferrable?: boolean } = {}) {
    const key = `${runId}:${nodeId}`;
    // A node with batches (OUTPUT) is written RUNNING at once: its batch steps may run in other invocations (Inngest),
    // where this process's timer and start time are gone.
    if (!this.fresh.delete(key) || !options.deferrable) return startNodeRow(this.db, runId, nodeId);
    const at = new Date();
    const timer = setTimeout(() => {
      if (this.started.get(key)?.timer !== timer) return;
      this.started.delete(key);
      markNodeRunning(this.db, runId, nodeId, at).catch((error) => log.warn("could not mark a node RUNNING", { runId, nodeId, error }));
    }, DEFERRED_RUNNING_MS);
    timer.unref();
    this.started.set(key, { at, timer });
    return undefined;
  }

  nodeSucceeded(runId: string, nodeId: string, success: Parameters<RunStore["nodeSucceeded"]>[2]) {
    return markNodeSucceeded(this.db, runId, nodeId, success, this.takeStart(runId, nodeId));
  }

  nodeFailed(runId: string, nodeId: string, error: string) {
    return markNodeFailed(this.db, runId, nodeId, error, this.takeStart(runId, nodeId));
  }

  /** A deferred start's time (its RUNNING write cancelled: the finishing write sets started_at). */
  private takeStart(runId: string, nodeId: string): Date | undefined {
    const key = `${runId}:${nodeId}`;
    const entry = this.started.get(key);
    if (!entry) return undefined;
    clearTimeout(entry.timer);
    this.started.delete(key);
    return entry.at;
  }

  nodesSkipped(runId: string, nodeIds: string[]) {
    return markNodesSkipped(this.db, runId, nodeIds);
  }

  outputs(runId: string, nodeIds: string[]) {
    return loadOutputs(this.db, runId, nodeIds);
  }

  log(runId: string, level: Parameters<RunStore["log"]>[1], message: string, nodeId?: string) {
    return appendRunLog(this.db, runId, level, message, nodeId);
  }

  stopReason(runId: string, options?: { fresh?: boolean }) {
    return stopReason(this.db, runId, options);
  }

  heartbeat(runId: string) {
    return heartbeat(this.db, runId);
  }

  release(runId: string) {
    this.forget(runId);
    return releaseRun(this.db, runId);
  }

  /** A run this store stops executing: nodes it never started stay as their rows say. */
  private forget(runId: string): void {
    for (const key of this.fresh) if (key.startsWith(`${runId}:`)) this.fresh.delete(key);
  }

  finalize(run: Parameters<RunStore["finalize"]>[0], order: string[], options: { cancelled: boolean }) {
    this.forget(run.runId);
    return finalizeRunRows(this.db, run, order, options);
  }
}
