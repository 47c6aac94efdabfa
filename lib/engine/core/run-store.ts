// The run engine's effects, behind one interface: the engine (execute-run.ts) plans and decides; a
// RunStore remembers. PgRunStore (pg-run-store.ts) is the product's store on PostgreSQL or PGlite; MemoryRunStore
// (memory-run-store.ts) keeps everything in maps, so the engine's skip/join/retry/cancel/reuse rules are tested in
// milliseconds without a database. No database import here.
import type { NodeStatus, RunResult } from "@/lib/schemas/runs";
import type { LogLevel } from "@/lib/nodes/types";
import type { StopReason } from "./run-stop";
import type { RunInfo } from "./runtime";

/** A run as the engine executes it: its snapshot, the workflow version it was enqueued with, and its status. */
export type StoredRun = RunInfo & {
  version: number;
  status: string;
  /** Its node rows and first log line were written by the claim (claimNext): the engine's "start" is done. */
  started?: boolean;
};

/** A node that already finished (a resumed run, or a node reused by a retry): it is not executed again. */
export type FinishedNode = { nodeId: string; status: NodeStatus; error: string | null };

/** A node's result and the log lines written with it, in order. */
export type NodeSuccess = { output: Record<string, unknown>; itemsIn?: number; itemsOut?: number; logMessages: string[] };

/** What finalizing wrote. `changed`: this call moved the run out of RUNNING (only that call sends webhooks and wakes). */
export type Finalized = {
  status: "SUCCESS" | "FAILED";
  result: RunResult;
  error: string | null;
  changed: boolean;
  /** Whether the account has webhooks at all (read in the same round trip, so a run without them pays nothing). */
  hasWebhooks: boolean;
};

export interface RunStore {
  /**
   * The oldest PENDING run of the workflow, moved to RUNNING and started (as `startRun`), while none of its runs is
   * RUNNING; else null.
   */
  claimNext(workflowId: string): Promise<(StoredRun & { claimed: true }) | null>;
  loadRun(runId: string): Promise<StoredRun | undefined>;
  /** One PENDING row per node (kept when already there: a resumed run) and the run's first log line. */
  startRun(run: StoredRun): Promise<void>;
  /**
   * Moves a node that has not finished to RUNNING; returns the node when it had already finished instead.
   * `deferrable`: the node finishes in this step (it has no batches), so a store may fold the RUNNING write into the
   * finishing one when the node is quick.
   */
  startNode(runId: string, nodeId: string, options?: { deferrable?: boolean }): Promise<FinishedNode | undefined>;
  nodeSucceeded(runId: string, nodeId: string, success: NodeSuccess): Promise<void>;
  nodeFailed(runId: string, nodeId: string, error: string): Promise<void>;
  /** Nodes that have not finished become SKIPPED (finished ones are left as they are). */
  nodesSkipped(runId: string, nodeIds: string[]): Promise<void>;
  /** Outputs of the named nodes that succeeded. */
  outputs(runId: string, nodeIds: string[]): Promise<Map<string, Record<string, unknown>>>;
  log(runId: string, level: LogLevel, message: string, nodeId?: string): Promise<void>;
  /** A cancel was asked (or this process hands its runs back). `fresh`: no cached answer. */
  stopReason(runId: string, options?: { fresh?: boolean }): Promise<StopReason | null>;
  /**
   * Keeps the claim alive; false when the run is no longer this process's. `skipWithinMs`: no statement (true) when this
   * process proved the run its own less than that long ago (its claim or a heartbeat) — what the store remembers, for
   * every store of the process (under Inngest a step's store is new).
   */
  heartbeat(runId: string, options?: { skipWithinMs?: number }): Promise<boolean>;
  /** Hands a RUNNING run back (SIGTERM): any process resumes it at once. */
  release(runId: string): Promise<void>;
  /**
   * Ends the run: unfinished nodes SKIPPED, the result counted, SUCCESS exactly when no node FAILED and it was not
   * cancelled. `order` ranks failures (the first failed node in topological order names the run's error).
   */
  finalize(run: RunInfo, order: string[], options: { cancelled: boolean }): Promise<Finalized>;
  /**
   * This process stops executing the run (finalized or handed back): whatever the store keeps of it in memory goes —
   * its heartbeat, its stop check, its nodes' progress writes and cached outputs.
   */
  forget(runId: string): void;
}
