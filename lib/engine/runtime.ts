import "server-only";
import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "@/db/client";
import { nodeResults, type NodeStatus } from "@/db/schema";
import type { Graph, GraphNode } from "@/lib/graph/schema";
import type { NodeRuntime, NodeState } from "@/lib/nodes/types";
import { loadOutputs } from "./node-store";
import { appendRunLog } from "./run-log";

export type RunInfo = { runId: string; workflowId: string; accountId: string; graph: Graph };

/**
 * Ids of the graph's nodes that `text` may name. Templates and expressions can only reach a node by writing its
 * id, so loading just these outputs keeps a node from reading every upstream output (a 100,000-row source included).
 */
export function namedNodeIds(graph: Graph, text: string): string[] {
  return graph.nodes.map((n) => n.id).filter((id) => new RegExp(`(^|[^A-Za-z0-9_])${id}([^A-Za-z0-9_]|$)`).test(text));
}

/** The runtime a node executor sees: the states and outputs of the nodes its data names. */
export async function buildRuntime(db: Db, run: RunInfo, node: GraphNode): Promise<NodeRuntime> {
  const named = namedNodeIds(run.graph, JSON.stringify(node.data)).filter((id) => id !== node.id);
  // Nodes whose data names no other node (TRIGGER, DATA_SOURCE) need no lookup.
  const statusRows =
    named.length === 0
      ? []
      : await db
          .select({ nodeId: nodeResults.nodeId, status: nodeResults.status })
          .from(nodeResults)
          .where(and(eq(nodeResults.runId, run.runId), inArray(nodeResults.nodeId, named)));
  const statuses = new Map<string, NodeStatus>(statusRows.map((r) => [r.nodeId, r.status]));
  const succeeded = named.filter((id) => statuses.get(id) === "SUCCESS");
  const outputs = await loadOutputs(db, run.runId, succeeded);
  const states = new Map<string, NodeState>();
  for (const id of named) {
    const status = statuses.get(id) ?? "PENDING";
    states.set(id, { status, output: status === "SUCCESS" ? outputs.get(id) ?? {} : null });
  }
  const nodeOutputs = Object.fromEntries(succeeded.map((id) => [id, outputs.get(id) ?? {}]));
  return {
    db,
    runId: run.runId,
    workflowId: run.workflowId,
    accountId: run.accountId,
    graph: run.graph,
    nodeState: (id) => states.get(id),
    nodeOutputs: () => nodeOutputs,
    templateContext: (field, item) => ({
      node: (id: string) => states.get(id),
      nodeId: node.id,
      field,
      ...(item ? { item: item.value, itemIndex: item.index } : {}),
    }),
    log: (level, message) => appendRunLog(db, run.runId, level, message, node.id),
  };
}

/** Outputs of the SUCCESS nodes that `text` names (the `nodes` scope of an edge condition). */
export async function namedOutputs(db: Db, run: RunInfo, text: string): Promise<Record<string, Record<string, unknown>>> {
  const outputs = await loadOutputs(db, run.runId, namedNodeIds(run.graph, text));
  return Object.fromEntries(outputs);
}
