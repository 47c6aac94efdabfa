// Execution planning: topological order and the skip rules of conditional branching, kept pure so
// the run engine and its tests share one definition of which node runs and which is SKIPPED.
import type { NodeStatus } from "@/lib/schemas/runs";
import type { Graph, GraphEdge } from "./schema";

export type NodeDecision = "wait" | "run" | "skip";

export class GraphCycleError extends Error {
  constructor(readonly nodeIds: string[]) {
    super(`The graph has a cycle through ${nodeIds.map((id) => `"${id}"`).join(", ")}`);
    this.name = "GraphCycleError";
  }
}

export function incomingEdges(graph: Graph, nodeId: string): GraphEdge[] {
  return graph.edges.filter((edge) => edge.target === nodeId);
}

export function outgoingEdges(graph: Graph, nodeId: string): GraphEdge[] {
  return graph.edges.filter((edge) => edge.source === nodeId);
}

/** Ids of the nodes this node depends on (direct sources of its incoming edges), each once, in edge order. */
export function upstreamOf(graph: Graph, nodeId: string): string[] {
  return [...new Set(incomingEdges(graph, nodeId).map((edge) => edge.source))];
}

/**
 * Nodes in an order where every edge points forward. Deterministic: among the nodes that are ready, the one
 * listed first in `graph.nodes` comes first. Edges naming unknown nodes are ignored (validation reports them).
 */
export function topologicalOrder(graph: Graph): string[] {
  const index = new Map(graph.nodes.map((node, i) => [node.id, i]));
  const inDegree = graph.nodes.map(() => 0);
  const successors: number[][] = graph.nodes.map(() => []);
  for (const edge of graph.edges) {
    const from = index.get(edge.source);
    const to = index.get(edge.target);
    if (from === undefined || to === undefined) continue;
    successors[from].push(to);
    inDegree[to] += 1;
  }
  const ready = new MinQueue();
  inDegree.forEach((degree, i) => degree === 0 && ready.push(i));
  const order: string[] = [];
  while (ready.size > 0) {
    const current = ready.pop();
    order.push(graph.nodes[current].id);
    for (const next of successors[current]) {
      inDegree[next] -= 1;
      if (inDegree[next] === 0) ready.push(next);
    }
  }
  if (order.length < graph.nodes.length) {
    const placed = new Set(order);
    throw new GraphCycleError(graph.nodes.map((node) => node.id).filter((id) => !placed.has(id)));
  }
  return order;
}

/** Every node with a path to `nodeId` (not the node itself, unless it lies on a cycle). */
export function ancestorsOf(graph: Graph, nodeId: string): Set<string> {
  const sourcesOf = new Map<string, string[]>();
  for (const edge of graph.edges) {
    const list = sourcesOf.get(edge.target);
    if (list) list.push(edge.source);
    else sourcesOf.set(edge.target, [edge.source]);
  }
  const seen = new Set<string>();
  const stack = [...(sourcesOf.get(nodeId) ?? [])];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    stack.push(...(sourcesOf.get(id) ?? []));
  }
  return seen;
}

/**
 * The contract's rule for one node, given the statuses so far. Waits while any upstream node is PENDING or
 * RUNNING; then skips when an upstream node FAILED or no incoming edge is live; runs otherwise. An edge is live
 * only when its source SUCCEEDED and `edgeIsLive(edge)` (called only then — that is where the engine evaluates
 * `condition`). A node without incoming edges (the TRIGGER) runs.
 */
export function decideNode(
  graph: Graph,
  nodeId: string,
  statusOf: (id: string) => NodeStatus,
  edgeIsLive: (edge: GraphEdge) => boolean,
): NodeDecision {
  const incoming = incomingEdges(graph, nodeId);
  if (incoming.length === 0) return "run";
  const upstream = [...new Set(incoming.map((edge) => edge.source))].map(statusOf);
  if (upstream.some((status) => status === "PENDING" || status === "RUNNING")) return "wait";
  if (upstream.includes("FAILED")) return "skip";
  const live = incoming.some((edge) => statusOf(edge.source) === "SUCCESS" && edgeIsLive(edge));
  return live ? "run" : "skip";
}

export type SimulatedOutcome = {
  /** Nodes that fail when they run. */
  failed?: string[];
  /** Value of each edge condition, keyed "source->target". Every edge with a `condition` that gets evaluated needs one. */
  conditions?: Record<string, boolean>;
  /**
   * The contract stops a run at its first failed node: every node that has not run becomes SKIPPED (default).
   * `false` keeps going and applies decideNode alone, so only the failed node's descendants are skipped.
   */
  haltOnFailure?: boolean;
};

/**
 * The reference of the whole skip semantics, for specifying the engine in tests: executes the graph one node
 * at a time in topological order, deciding each node with decideNode, until every node has a final status.
 */
export function simulateRun(graph: Graph, outcome: SimulatedOutcome): Record<string, NodeStatus> {
  const status: Record<string, NodeStatus> = Object.create(null);
  for (const node of graph.nodes) status[node.id] = "PENDING";
  const failed = new Set(outcome.failed ?? []);
  const statusOf = (id: string): NodeStatus => status[id] ?? "SKIPPED";
  const edgeIsLive = (edge: GraphEdge): boolean => {
    if (edge.condition === undefined) return true;
    const key = `${edge.source}->${edge.target}`;
    const value = outcome.conditions?.[key];
    if (value === undefined) throw new Error(`simulateRun: no outcome given for the condition on edge ${key}`);
    return value;
  };
  let halted = false;
  for (const nodeId of topologicalOrder(graph)) {
    if (halted) {
      status[nodeId] = "SKIPPED";
      continue;
    }
    const decision = decideNode(graph, nodeId, statusOf, edgeIsLive);
    // Topological order means every upstream node is final here, so "wait" cannot happen.
    if (decision === "wait") throw new Error(`simulateRun: node ${nodeId} is still waiting`);
    status[nodeId] = decision === "skip" ? "SKIPPED" : failed.has(nodeId) ? "FAILED" : "SUCCESS";
    if (status[nodeId] === "FAILED" && outcome.haltOnFailure !== false) halted = true;
  }
  return { ...status };
}

/** A tiny binary min-heap of node indexes, so topologicalOrder stays O(E log V) on large inputs. */
class MinQueue {
  private heap: number[] = [];
  get size(): number {
    return this.heap.length;
  }
  push(value: number): void {
    const heap = this.heap;
    heap.push(value);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent] <= heap[i]) break;
      [heap[parent], heap[i]] = [heap[i], heap[parent]];
      i = parent;
    }
  }
  pop(): number {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < heap.length && heap[left] < heap[smallest]) smallest = left;
        if (right < heap.length && heap[right] < heap[smallest]) smallest = right;
        if (smallest === i) break;
        [heap[smallest], heap[i]] = [heap[i], heap[smallest]];
        i = smallest;
      }
    }
    return top;
  }
}
