import "server-only";
import type { GraphNode } from "@/lib/graph/schema";
import { log } from "@/lib/log";
import { NodeError, NodeStopped, type NodeRuntime } from "@/lib/nodes/types";
import type { EngineDeps, Execution, NodeSummary } from "./execute-run";
import { RunLostError } from "./run-stop";
import type { RunStore } from "./run-store";
import { buildRuntime } from "./runtime";

// What wraps every node step of the engine: the heartbeat that proves the run is still this process's, the node's
// runtime (built once per node), and the rule that a node's error fails the node with a sentence, not the run.

/** Runs node code; a NodeError (or any error) fails the node with a sentence instead of escaping the step. */
export async function guard(
  deps: EngineDeps,
  run: Execution,
  node: GraphNode,
  fn: (rt: NodeRuntime) => Promise<NodeSummary>,
): Promise<NodeSummary> {
  const { store } = deps;
  await beat(store, run.runId);
  try {
    return await fn(await runtimeFor(deps, run, node));
  } catch (error) {
    // A cancel (or hand-back) seen inside a long node: the node stays unfinished and the run stops.
    if (error instanceof NodeStopped) return { status: "STOPPED" };
    // Not the node's fault: the run stays RUNNING and is resumed (the sweep, or Inngest's step retry).
    if (!(error instanceof NodeError) && deps.isOutage?.(error)) throw error;
    const message = nodeErrorMessage(error);
    if (!(error instanceof NodeError)) log.error("node failed unexpectedly", { runId: run.runId, nodeId: node.id, error });
    await store.nodeFailed(run.runId, node.id, message);
    await store.log(run.runId, "error", `Node "${node.id}" failed: ${message}`, node.id);
    return { status: "FAILED", error: message };
  }
}

/**
 * A node's runtime is fixed once it starts (its upstream nodes have all finished), so the batch steps of an OUTPUT
 * node reuse it instead of re-reading the run's statuses for every 100 emails. Another process rebuilds it.
 */
const runtimes = new WeakMap<RunStore, Map<string, Promise<NodeRuntime>>>();

function runtimeFor(deps: EngineDeps, run: Execution, node: GraphNode): Promise<NodeRuntime> {
  let cached = runtimes.get(deps.store);
  if (!cached) runtimes.set(deps.store, (cached = new Map()));
  const key = `${run.runId}:${node.id}`;
  let runtime = cached.get(key);
  if (!runtime) {
    if (cached.size >= 64) cached.delete(cached.keys().next().value as string);
    runtime = buildRuntime(deps.store, deps.ports, run, node);
    const entries = cached;
    entries.set(key, runtime);
    runtime.catch(() => entries.delete(key));
  }
  return runtime;
}

/** A run's heartbeat is written at most this often from its nodes' steps: steps can be many and short (OUTPUT batches). */
const BEAT_EVERY_MS = 5_000;

/** Proves the run still this process's before a step (the store skips the statement within BEAT_EVERY_MS of the last). */
async function beat(store: RunStore, runId: string): Promise<void> {
  // Another process took the run over (this one's lock session was lost meanwhile): stop before the next step.
  if (!(await store.heartbeat(runId, { skipWithinMs: BEAT_EVERY_MS }))) throw new RunLostError(runId);
}

function nodeErrorMessage(error: unknown): string {
  if (error instanceof NodeError) return error.message;
  return "An unexpected error stopped this node (it has been logged for the operators); run the workflow again.";
}

/** A run this process stops executing (finalized or handed back): its runtimes and the store's memory of it go. */
export function forgetRun(store: RunStore, runId: string): void {
  store.forget(runId);
  const cached = runtimes.get(store);
  if (!cached) return;
  for (const key of cached.keys()) if (key.startsWith(`${runId}:`)) cached.delete(key);
}
