import "server-only";
import type { NodeStatus } from "@/lib/schemas/runs";
import { compileExpression, ExpressionError, isTruthy } from "@/lib/graph/expressions";
import { ancestorsOf, decideNode, outgoingEdges, topologicalOrder } from "@/lib/graph/plan";
import type { GraphEdge, GraphNode, NodeType } from "@/lib/graph/schema";
import { log } from "@/lib/log";
import type { NodePorts } from "@/lib/nodes/ports";
import { nodeExecutors } from "@/lib/nodes/registry";
import { NodeError, type NodeExecutor, type NodeOutcome } from "@/lib/nodes/types";
import { forgetRun, guard } from "./node-step";
import { noteNodeItems, observeNode, observeRun, runFinishedMetric, type RunEnd } from "./observe-run";
import type { StopReason } from "./run-stop";
import type { Finalized, RunStore, StoredRun } from "./run-store";
import { namedOutputs, type RunInfo } from "./runtime";

/** The durable-step primitive: Inngest's `step`, or the embedded executor's plain call. */
export type Step = { run<T>(id: string, fn: () => Promise<T>): Promise<T> };

/** In-process, a step is just the call: completed nodes are memoized by the run store, not in a step log. */
export const inlineStep: Step = { run: (_id, fn) => fn() };

/** What a node step returns (step results stay small: outputs live in Postgres). */
export type NodeSummary = {
  /** STOPPED: a cancel or a hand-back (SIGTERM) was seen before the node's next email batch. */
  status: "SUCCESS" | "FAILED" | "RUNNING" | "STOPPED";
  error?: string;
  /** Targets of outgoing edges whose condition was false. */
  deadTargets?: string[];
  batches?: number;
  stop?: StopReason;
};

/** A run being executed: its snapshot and the statuses its nodes have reached in this execution. */
export type Execution = RunInfo & { statusOf(id: string): NodeStatus };

export type EngineDeps = {
  /** Where the run's state lives (PgRunStore in the product, MemoryRunStore in the engine's unit tests). */
  store: RunStore;
  /** What node executors may reach outside the run (uploads, AI settings, the send ledger, the send limiter). */
  ports: NodePorts;
  /** Sends the wake-up for the workflow's next run (an Inngest event, or a poke of the embedded executor). */
  wake: (workflowId: string) => Promise<void>;
  /** Called once when this engine moved a run out of RUNNING and the account has webhooks (run.succeeded/failed). */
  runFinished?: (run: RunInfo, finalized: Finalized) => Promise<void>;
  /**
   * Called once when this engine finalized a run as cancelled: what its nodes left at outside services (an AI node's
   * provider batches) is cancelled there, also when the run was cancelled while no process held it.
   */
  runCancelled?: (run: RunInfo) => Promise<void>;
  /**
   * Whether an error a node met is an outage of the store's backend (a lost or refusing database): the run then stays
   * RUNNING and is resumed instead of failing the node. None: every error fails its node.
   */
  isOutage?: (error: unknown) => boolean;
  /** The node executors by type (tests swap in their own); the registry otherwise. */
  executors?: { [T in NodeType]: NodeExecutor<T> };
};

/** Claims the workflow's next run and executes it to the end. Returns the run id, or null when there was none to claim. */
export async function claimAndExecute(step: Step, deps: EngineDeps, workflowId: string): Promise<string | null> {
  // The step result stays small (Inngest stores it): just the id; the run is read again below. The claim started it.
  const claimed = await step.run("claim", async () => (await deps.store.claimNext(workflowId))?.runId ?? null);
  if (!claimed) return null;
  const run = await deps.store.loadRun(claimed);
  if (run) await executeRun(step, deps, claimed, { ...run, started: true });
  return claimed;
}

/**
 * Executes a RUNNING run: nodes in waves of what can run now (independent branches concurrently), each node its own
 * step; skip rules from the graph module; then finalize. Re-entrant: a node already SUCCESS or FAILED in Postgres is
 * not executed again, so a resumed run continues from its first unfinished node.
 */
export async function executeRun(step: Step, deps: EngineDeps, runId: string, claimed?: StoredRun): Promise<void> {
  const { store } = deps;
  // A run this process has just claimed comes with its snapshot (and a fresh heartbeat): no read, no beat yet.
  const run = claimed ?? (await store.loadRun(runId));
  if (!run || run.status !== "RUNNING") return;
  await observeRun(run, (started) => executeLoaded(step, deps, run, started));
}

/** executeRun's work on the loaded run; says how it ended (finalized, or handed back) for its span and metrics. */
async function executeLoaded(step: Step, deps: EngineDeps, run: StoredRun, started: number): Promise<RunEnd> {
  const { store } = deps;
  const runId = run.runId;
  if (!run.started) {
    await step.run("start", async () => {
      await store.startRun(run);
      return true;
    });
  }
  const statuses = new Map<string, NodeStatus>(run.graph.nodes.map((n) => [n.id, "PENDING"]));
  // A node runs only once every node upstream of it is final here, so this map is what its runtime reads (no query).
  const execution: Execution = { ...run, statusOf: (id) => statuses.get(id) ?? "PENDING" };
  const summaries = new Map<string, NodeSummary>();
  const order = topologicalOrder(run.graph);
  const byId = new Map(run.graph.nodes.map((n) => [n.id, n]));
  let failed = false;
  let stopped: StopReason | null = null;
  while (!failed && !stopped) {
    const wave = await planWave(store, run, order, statuses, summaries);
    if (wave.length === 0) break; // every node finished: a cancel that arrives now is too late to stop anything
    // Checked before every node wave (and before every email batch group, in runNode): cancel and SIGTERM stop here.
    stopped = await store.stopReason(runId);
    if (stopped) break;
    const results = await Promise.all(wave.map((id) => observeNode(byId.get(id)!, () => runNode(step, deps, execution, byId.get(id)!))));
    wave.forEach((id, i) => {
      summaries.set(id, results[i]);
      if (results[i].status === "STOPPED") stopped = results[i].stop ?? "cancel";
      else statuses.set(id, results[i].status === "SUCCESS" ? "SUCCESS" : "FAILED");
      if (results[i].status === "FAILED") failed = true;
    });
  }
  // A cancel that arrived during a hand-back still finishes the run as cancelled.
  const reason = stopped ? await store.stopReason(runId, { fresh: true }) : null;
  if (reason === "handback") {
    // SIGTERM/SIGINT: the run stays RUNNING, released so the next process (or another instance) resumes it at once.
    await store.release(runId);
    forgetRun(store, runId);
    return { status: "released" };
  }
  const end = await step.run("finalize", () => finishRun(deps, run, order, reason === "cancel", started));
  forgetRun(store, runId);
  return end;
}

/**
 * Finalizes the run; only the call that moved it out of RUNNING announces it (webhooks) and wakes the workflow's next
 * run. A failed announcement or wake-up is logged, never fatal: the sweep repairs a lost wake-up.
 */
async function finishRun(
  deps: EngineDeps,
  run: RunInfo,
  order: string[],
  cancelled: boolean,
  started: number,
): Promise<{ status: "SUCCESS" | "FAILED"; changed: boolean }> {
  const finalized = await deps.store.finalize(run, order, { cancelled });
  if (!finalized.changed) return { status: finalized.status, changed: false };
  // Counted here, inside the finalize step, so a replayed step (Inngest) never counts a run twice.
  runFinishedMetric(run, finalized.status, started);
  if (cancelled && deps.runCancelled) {
    await deps.runCancelled(run).catch((e) => log.error("could not clean up after a cancelled run", { runId: run.runId, error: e }));
  }
  if (finalized.hasWebhooks && deps.runFinished) {
    await deps.runFinished(run, finalized).catch((e) => log.error("could not enqueue run webhooks", { runId: run.runId, error: e }));
  }
  await deps.wake(run.workflowId).catch((e) => log.error("wake-up failed (the sweep will repair it)", { workflowId: run.workflowId, error: e }));
  return { status: finalized.status, changed: true };
}


/** Marks the nodes that can never run as SKIPPED and returns those that can run now. */
async function planWave(
  store: RunStore,
  run: RunInfo,
  order: string[],
  statuses: Map<string, NodeStatus>,
  summaries: Map<string, NodeSummary>,
): Promise<string[]> {
  const edgeIsLive = (edge: GraphEdge) => !summaries.get(edge.source)?.deadTargets?.includes(edge.target);
  const statusOf = (id: string) => statuses.get(id) ?? "PENDING";
  const ready: string[] = [];
  const skipped: string[] = [];
  const outside = untilScope(run);
  const beyondEstimate = estimateScope(run);
  for (const id of order) {
    if (statuses.get(id) !== "PENDING") continue;
    // Preview `until`: only that node and its ancestors execute; every other node is SKIPPED. An
    // estimate stops at the AI nodes: nothing after one runs, and no OUTPUT sends.
    const decision = outside?.(id) || beyondEstimate?.(id) ? "skip" : decideNode(run.graph, id, statusOf, edgeIsLive);
    if (decision === "skip") {
      statuses.set(id, "SKIPPED"); // later nodes in topological order see it at once
      skipped.push(id);
    } else if (decision === "run") {
      ready.push(id);
    }
  }
  // Idempotent outside a step: replaying it writes the same SKIPPED rows.
  await store.nodesSkipped(run.runId, skipped);
  return ready;
}

/** For an estimate, a test "is this node an OUTPUT or downstream of an AI node"; undefined otherwise. */
function estimateScope(run: RunInfo): ((id: string) => boolean) | undefined {
  if (run.mode !== "estimate") return undefined;
  const types = new Map(run.graph.nodes.map((n) => [n.id, n.type]));
  return (id) => types.get(id) === "OUTPUT" || [...ancestorsOf(run.graph, id)].some((a) => types.get(a) === "AI");
}

/** For a preview with `until`, a test "is this node outside the until node's ancestry"; undefined otherwise. */
function untilScope(run: RunInfo): ((id: string) => boolean) | undefined {
  if (run.mode !== "preview" || !run.untilNodeId) return undefined;
  if (!run.graph.nodes.some((n) => n.id === run.untilNodeId)) return undefined;
  const keep = ancestorsOf(run.graph, run.untilNodeId);
  keep.add(run.untilNodeId);
  return (id) => !keep.has(id);
}

/**
 * Email batches of a node sent at once, in groups: a group starts once the previous one has ended. A batch's round trips
 * (pending read, provider call, mark-sent with its flushed commit) leave a lane mostly waiting, which is why there are
 * several. A sliding window (a batch started as each ends) was tried: no faster through a paced SMTP sender, and the
 * gaps between groups are what other requests on the same process and embedded database get while a 100,000-row run
 * sends (docs/decisions/batch-groups.md). Cancel and SIGTERM are checked before each batch starts (the check is cached
 * for a moment), so none starts once a stop is seen.
 */
const BATCHES_IN_FLIGHT = 8;

/** One node: its main step, then (OUTPUT) one step per batch and a completing step. */
async function runNode(step: Step, deps: EngineDeps, run: Execution, node: GraphNode): Promise<NodeSummary> {
  const executor = (deps.executors ?? nodeExecutors)[node.type] as NodeExecutor;
  const first = await step.run(`node:${node.id}`, () => startNode(deps, run, node, executor));
  if (first.status !== "RUNNING") return first;
  const ended = await runBatches(step, deps, run, node, executor, first.batches ?? 0);
  if (ended) return ended;
  return step.run(`node:${node.id}:done`, () => guard(deps, run, node, async (rt) => finishNode(deps.store, run, node, await executor.complete!(node, rt))));
}

/**
 * The node's batch steps, in groups of BATCHES_IN_FLIGHT (the ledger keys each email, so concurrent batches never
 * overlap). Answers how the node ended early (FAILED or STOPPED), or undefined when every batch ran. A group's batches
 * all settle before the node ends: when one throws (a lost database connection), a resume never sends a batch that an
 * orphaned sibling is still sending.
 */
async function runBatches(step: Step, deps: EngineDeps, run: Execution, node: GraphNode, executor: NodeExecutor, batches: number): Promise<NodeSummary | undefined> {
  for (let first = 0; first < batches; first += BATCHES_IN_FLIGHT) {
    const group: Promise<NodeSummary>[] = [];
    let stop: StopReason | null = null;
    for (let batch = first; batch < Math.min(batches, first + BATCHES_IN_FLIGHT); batch++) {
      stop = await deps.store.stopReason(run.runId);
      if (stop) break;
      group.push(
        step.run(`node:${node.id}:batch:${batch}`, () =>
          guard(deps, run, node, async (rt): Promise<NodeSummary> => {
            const stopped = (await executor.runBatch!(node, rt, batch)) === "stopped";
            return { status: stopped ? "STOPPED" : "RUNNING" };
          }),
        ),
      );
    }
    const settled = await Promise.allSettled(group);
    const rejected = settled.find((s) => s.status === "rejected");
    if (rejected) throw rejected.reason;
    const summaries = settled.map((s) => (s as PromiseFulfilledResult<NodeSummary>).value);
    const failed = summaries.find((s) => s.status === "FAILED");
    if (failed) return executor.settleFailure ? step.run(`node:${node.id}:failed`, () => settleFailure(deps, run, node, executor, failed.error ?? "failed")) : failed;
    // A batch cut short while it waited (a cancel during a long Retry-After): stop now, even after the last group.
    if (summaries.some((s) => s.status === "STOPPED")) return { status: "STOPPED", stop: (await deps.store.stopReason(run.runId, { fresh: true })) ?? "cancel" };
    if (stop) return { status: "STOPPED", stop };
  }
  return undefined;
}

/** The failure sentence of a batched node rewritten once its batches have all ended (see NodeExecutor.settleFailure). */
function settleFailure(deps: EngineDeps, run: Execution, node: GraphNode, executor: NodeExecutor, sentence: string): Promise<NodeSummary> {
  return guard(deps, run, node, async (rt) => {
    const settled = await executor.settleFailure!(node, rt, sentence);
    if (settled !== sentence) await deps.store.nodeFailed(run.runId, node.id, settled);
    return { status: "FAILED", error: settled };
  });
}

async function startNode(deps: EngineDeps, run: Execution, node: GraphNode, executor: NodeExecutor): Promise<NodeSummary> {
  const finished = await deps.store.startNode(run.runId, node.id, { deferrable: !executor.runBatch });
  if (finished?.status === "SUCCESS") return guard(deps, run, node, async () => ({ status: "SUCCESS", deadTargets: await deadTargets(deps.store, run, node) }));
  if (finished) return { status: "FAILED", error: finished.error ?? "failed" };
  return guard(deps, run, node, async (rt) => {
    const outcome = await executor.execute(node, rt);
    if (outcome.kind === "batched") return { status: "RUNNING", batches: outcome.batches };
    return finishNode(deps.store, run, node, outcome);
  });
}

async function finishNode(store: RunStore, run: RunInfo, node: GraphNode, outcome: NodeOutcome): Promise<NodeSummary> {
  const dead = await deadTargets(store, run, node, outcome.output);
  const items = outcome.itemsOut !== undefined ? ` (${outcome.itemsOut} item${outcome.itemsOut === 1 ? "" : "s"})` : "";
  const logMessages = [...(outcome.log ? [outcome.log] : []), `Node "${node.id}" succeeded${items}`];
  noteNodeItems(outcome.itemsIn, outcome.itemsOut);
  await store.nodeSucceeded(run.runId, node.id, { output: outcome.output, itemsIn: outcome.itemsIn, itemsOut: outcome.itemsOut, logMessages });
  return { status: "SUCCESS", deadTargets: dead };
}

/** Evaluates the conditions on the node's outgoing edges (scope: upstream outputs by id, this node's included). */
async function deadTargets(store: RunStore, run: RunInfo, node: GraphNode, ownOutput?: Record<string, unknown>): Promise<string[]> {
  const dead: string[] = [];
  for (const edge of outgoingEdges(run.graph, node.id)) {
    if (!edge.condition) continue;
    const nodes = await namedOutputs(store, run, edge.condition);
    if (ownOutput) nodes[node.id] = ownOutput;
    let live: boolean;
    try {
      live = isTruthy(compileExpression(edge.condition).evaluate({ nodes }));
    } catch (error) {
      if (error instanceof ExpressionError) {
        throw new NodeError(`The condition "${edge.condition}" on the edge ${node.id} → ${edge.target} failed: ${error.message}`);
      }
      throw error;
    }
    if (!live) dead.push(edge.target);
  }
  return dead;
}
