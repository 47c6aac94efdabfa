// A RunStore in maps: the engine's rules (skip, join, retry/reuse, cancel, hand-back, until) run against it
// in milliseconds, without a database. Not used by the product: one process, nothing durable.
import type { NodeStatus, RunResult } from "@/lib/schemas/runs";
import type { LogLevel } from "@/lib/nodes/types";
import type { StopReason } from "./run-stop";
import { outcomeMessage, runOutcome } from "./run-outcome";
import type { Finalized, FinishedNode, NodeSuccess, RunStore, StoredRun } from "./run-store";
import type { RunInfo } from "./runtime";

type MemoryNode = {
  status: NodeStatus;
  output: Record<string, unknown> | null;
  error: string | null;
  itemsIn?: number;
  itemsOut?: number;
  /** Copied from an earlier run by a retry or a send (never executed here). */
  reused?: boolean;
  type: string;
};

type MemoryRun = StoredRun & {
  seq: number;
  nodes: Map<string, MemoryNode>;
  logs: { level: LogLevel; message: string; nodeId?: string }[];
  cancelRequested: boolean;
  result?: RunResult;
  error?: string | null;
  heartbeats: number;
};

export class MemoryRunStore implements RunStore {
  readonly runs = new Map<string, MemoryRun>();
  /** Set by a test to act as a process that is handing its runs back (SIGTERM). */
  handingBack = false;
  /** Runs this store's process no longer owns (taken over elsewhere): their heartbeat answers false. */
  readonly lost = new Set<string>();
  /** When each run's last heartbeat was (a claim is no beat here: the first node's guard beats, and may learn it is lost). */
  private readonly beatAt = new Map<string, number>();
  private seq = 0;

  /** Enqueues a PENDING run. `reused`: nodes copied as SUCCESS from an earlier run (what a retry or a send does). */
  enqueue(run: Omit<StoredRun, "status" | "version"> & { version?: number }, reused: Record<string, Record<string, unknown>> = {}): MemoryRun {
    const nodes = new Map<string, MemoryNode>();
    for (const [nodeId, output] of Object.entries(reused)) {
      const type = run.graph.nodes.find((n) => n.id === nodeId)?.type ?? "TRIGGER";
      nodes.set(nodeId, { status: "SUCCESS", output, error: null, reused: true, type });
    }
    const stored: MemoryRun = { version: 1, ...run, status: "PENDING", seq: ++this.seq, nodes, logs: [], cancelRequested: false, heartbeats: 0 };
    this.runs.set(run.runId, stored);
    return stored;
  }

  get(runId: string): MemoryRun {
    const run = this.runs.get(runId);
    if (!run) throw new Error(`no run ${runId}`);
    return run;
  }

  requestCancel(runId: string): void {
    this.get(runId).cancelRequested = true;
  }

  async claimNext(workflowId: string) {
    const runs = [...this.runs.values()].filter((r) => r.workflowId === workflowId);
    if (runs.some((r) => r.status === "RUNNING")) return null;
    const next = runs.filter((r) => r.status === "PENDING").sort((a, b) => a.seq - b.seq)[0];
    if (!next) return null;
    next.status = "RUNNING";
    await this.startRun(snapshot(next));
    return { ...snapshot(next), started: true, claimed: true as const };
  }

  async loadRun(runId: string): Promise<StoredRun | undefined> {
    const run = this.runs.get(runId);
    return run ? snapshot(run) : undefined;
  }

  async startRun(run: StoredRun): Promise<void> {
    const stored = this.get(run.runId);
    const fresh = run.graph.nodes.some((n) => !stored.nodes.has(n.id)) || run.graph.nodes.length === 0;
    for (const n of run.graph.nodes) if (!stored.nodes.has(n.id)) stored.nodes.set(n.id, { status: "PENDING", output: null, error: null, type: n.type });
    stored.logs.push({ level: "info", message: fresh ? `Run started (workflow version ${run.version})` : "Run resumed after an interruption" });
  }

  async startNode(runId: string, nodeId: string): Promise<FinishedNode | undefined> {
    const node = this.node(runId, nodeId);
    if (node.status === "PENDING" || node.status === "RUNNING") {
      node.status = "RUNNING";
      node.error = null;
      return undefined;
    }
    return { nodeId, status: node.status, error: node.error };
  }

  async nodeSucceeded(runId: string, nodeId: string, success: NodeSuccess): Promise<void> {
    Object.assign(this.node(runId, nodeId), { status: "SUCCESS", output: success.output, itemsIn: success.itemsIn, itemsOut: success.itemsOut, error: null });
    for (const message of success.logMessages) this.get(runId).logs.push({ level: "info", message, nodeId });
  }

  async nodeFailed(runId: string, nodeId: string, error: string): Promise<void> {
    Object.assign(this.node(runId, nodeId), { status: "FAILED", error });
  }

  async nodesSkipped(runId: string, nodeIds: string[]): Promise<void> {
    for (const id of nodeIds) {
      const node = this.node(runId, id);
      if (node.status === "PENDING" || node.status === "RUNNING") node.status = "SKIPPED";
    }
  }

  async outputs(runId: string, nodeIds: string[]): Promise<Map<string, Record<string, unknown>>> {
    const run = this.get(runId);
    const out = new Map<string, Record<string, unknown>>();
    for (const id of nodeIds) {
      const node = run.nodes.get(id);
      if (node?.status === "SUCCESS") out.set(id, node.output ?? {});
    }
    return out;
  }

  async log(runId: string, level: LogLevel, message: string, nodeId?: string): Promise<void> {
    this.get(runId).logs.push({ level, message, nodeId });
  }

  async stopReason(runId: string): Promise<StopReason | null> {
    if (this.get(runId).cancelRequested) return "cancel";
    return this.handingBack ? "handback" : null;
  }

  async heartbeat(runId: string, options: { skipWithinMs?: number } = {}): Promise<boolean> {
    const run = this.get(runId);
    const now = Date.now();
    if (options.skipWithinMs !== undefined && now - (this.beatAt.get(runId) ?? 0) < options.skipWithinMs) return true;
    this.beatAt.set(runId, now);
    run.heartbeats++;
    return run.status === "RUNNING" && !this.lost.has(runId);
  }

  forget(runId: string): void {
    this.beatAt.delete(runId);
  }

  async release(runId: string): Promise<void> {
    this.get(runId).logs.push({ level: "info", message: "Handed back" });
  }

  /**
   * As PgRunStore: the result counts DATA_SOURCE rows, FILTER's filteredOut and the OUTPUT nodes' own counts (this store
   * has no send ledger; the executed OUTPUT nodes' outputs stand for it, reused ones are not counted again).
   */
  async finalize(info: RunInfo, order: string[], options: { cancelled: boolean }): Promise<Finalized> {
    const run = this.get(info.runId);
    const nodes = [...run.nodes.entries()].map(([nodeId, n]) => ({ nodeId, ...n }));
    await this.nodesSkipped(info.runId, nodes.filter((n) => n.status === "PENDING" || n.status === "RUNNING").map((n) => n.nodeId));
    const outcome = runOutcome(nodes, order, options.cancelled);
    const count = (type: string, field: string, executedOnly = false) =>
      nodes
        .filter((n) => n.type === type && n.status === "SUCCESS" && !(executedOnly && n.reused))
        .reduce((sum, n) => sum + Number(n.output?.[field] ?? 0), 0);
    const result: RunResult = {
      emailsSent: count("OUTPUT", "emailsSent", true),
      filteredOut: count("FILTER", "filteredOut"),
      totalRows: count("DATA_SOURCE", "rowCount"),
      suppressed: count("OUTPUT", "suppressed", true),
      duplicates: count("OUTPUT", "duplicates", true),
      ...(info.mode === "preview" ? { emailsPlanned: count("OUTPUT", "emailsPlanned", true) } : {}),
      ...(count("OUTPUT", "failed", true) > 0 ? { failed: count("OUTPUT", "failed", true) } : {}),
      ...(count("OUTPUT", "unknown", true) > 0 ? { unknown: count("OUTPUT", "unknown", true) } : {}),
    };
    if (run.status !== "RUNNING") return { ...outcome, result, changed: false, hasWebhooks: false };
    Object.assign(run, { status: outcome.status, result, error: outcome.error });
    run.logs.push({ level: outcome.status === "SUCCESS" ? "info" : "error", message: outcomeMessage(outcome, result, options.cancelled) });
    return { ...outcome, result, changed: true, hasWebhooks: false };
  }

  private node(runId: string, nodeId: string): MemoryNode {
    const node = this.get(runId).nodes.get(nodeId);
    if (!node) throw new Error(`no node ${nodeId} in run ${runId}`);
    return node;
  }
}

function snapshot(run: MemoryRun): StoredRun {
  const { runId, workflowId, accountId, graph, version, status, mode, trigger, untilNodeId, ledgerRunId, triggerBody } = run;
  return { runId, workflowId, accountId, graph, version, status, mode, trigger, untilNodeId, ledgerRunId, triggerBody };
}
