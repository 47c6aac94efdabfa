import "server-only";
import { sql } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import type { Graph } from "@/lib/graph/schema";
import { finalizeRunRows } from "./finalize-run";
import { loadOutputs, markNodeFailed, markNodesSkipped, markNodeSucceeded, startNodeRow, startRunRows } from "./node-store";
import { claimNextRunWithInfo, heartbeat } from "./queue";
import { noteClaimed, releaseRun, stopReason } from "./run-control";
import { appendRunLog } from "./run-log";
import type { RunStore, StoredRun } from "./run-store";
import { RUN_INFO_COLUMNS, runInfoExtras, type RunInfoRow } from "./runtime";

/**
 * The product's RunStore: node rows, outputs, logs and the run's status in PostgreSQL (or PGlite). Claims, heartbeats
 * and takeovers follow queue.ts (one atomic UPDATE each, ownership by executor key and heartbeat).
 */
export class PgRunStore implements RunStore {
  constructor(readonly db: Db) {}

  async claimNext(workflowId: string) {
    const claimed = await claimNextRunWithInfo(this.db, workflowId);
    if (claimed) noteClaimed(claimed.runId, claimed.cancelRequested);
    return claimed ? { ...claimed, status: "RUNNING", started: true, claimed: true as const } : null;
  }

  async loadRun(runId: string): Promise<StoredRun | undefined> {
    const [row] = await execRows<{ id: string; workflow_id: string; account_id: string; graph: unknown; workflow_version: number; status: string } & RunInfoRow>(
      this.db,
      sql`select id, workflow_id, account_id, graph, workflow_version, status, ${sql.raw(RUN_INFO_COLUMNS)} from runs where id = ${runId}`,
    );
    if (!row) return undefined;
    return {
      runId: row.id,
      workflowId: row.workflow_id,
      accountId: row.account_id,
      graph: row.graph as Graph,
      version: Number(row.workflow_version),
      status: row.status,
      ...runInfoExtras(row),
    };
  }

  startRun(run: StoredRun) {
    return startRunRows(this.db, run.runId, run.graph.nodes, run.version);
  }

  startNode(runId: string, nodeId: string) {
    return startNodeRow(this.db, runId, nodeId);
  }

  nodeSucceeded(runId: string, nodeId: string, success: Parameters<RunStore["nodeSucceeded"]>[2]) {
    return markNodeSucceeded(this.db, runId, nodeId, success);
  }

  nodeFailed(runId: string, nodeId: string, error: string) {
    return markNodeFailed(this.db, runId, nodeId, error);
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
    return releaseRun(this.db, runId);
  }

  finalize(run: Parameters<RunStore["finalize"]>[0], order: string[], options: { cancelled: boolean }) {
    return finalizeRunRows(this.db, run, order, options);
  }
}
