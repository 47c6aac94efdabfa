import "server-only";
import type { NodeStatus, RunMode, RunTrigger } from "@/lib/schemas/runs";
import type { Graph, GraphNode } from "@/lib/graph/schema";
import type { NodePorts } from "@/lib/nodes/ports";
import type { NodeRuntime, NodeState } from "@/lib/nodes/types";
import type { RunStore } from "./run-store";

export type RunInfo = {
  runId: string;
  workflowId: string;
  accountId: string;
  graph: Graph;
  /** Part two; absent fields read as a live, manual run that is its own chain root. */
  mode?: RunMode;
  trigger?: RunTrigger;
  untilNodeId?: string | null;
  /** The run whose send ledger this run shares: the first run of its retry chain (itself when not a retry). */
  ledgerRunId?: string;
  /** An inbound hook's body (the TRIGGER's output is `{ body }`); undefined for other triggers. */
  triggerBody?: unknown;
  /** The W3C trace context of the request that enqueued the run: its spans are that trace's children. */
  traceparent?: string | null;
  /** The APP_URL and EMAIL_FROM its emails are built with, fixed when the run was first claimed (null before). */
  emailIdentity?: EmailIdentity | null;
};

/**
 * What a run's emails are built with, fixed when it is first claimed. `defaultSenderId`: the account's default sender
 * then (null: none, the deployment's transport), used by OUTPUT nodes without a `senderId`; absent on runs claimed
 * before it was recorded.
 */
export type EmailIdentity = { appUrl: string; from: string; defaultSenderId?: string | null };

/**
 * Ids of the graph's nodes that `text` may name. Templates and expressions can only reach a node by writing its
 * id, so loading just these outputs keeps a node from reading every upstream output (a 100,000-row source included).
 */
function namedNodeIds(graph: Graph, text: string): string[] {
  return graph.nodes.map((n) => n.id).filter((id) => new RegExp(`(^|[^A-Za-z0-9_])${id}([^A-Za-z0-9_]|$)`).test(text));
}

/** The runtime a node executor sees: the states and outputs of the nodes its data names, and the node ports. */
export async function buildRuntime(
  store: RunStore,
  ports: NodePorts,
  run: RunInfo & { statusOf(id: string): NodeStatus },
  node: GraphNode,
): Promise<NodeRuntime> {
  const { statusOf } = run;
  const named = namedNodeIds(run.graph, JSON.stringify(node.data)).filter((id) => id !== node.id);
  // Statuses come from the engine (every node upstream is final when this one runs); outputs from the store, which
  // keeps those this process wrote. Nodes whose data names no other node (TRIGGER, DATA_SOURCE) need no lookup.
  const succeeded = named.filter((id) => statusOf(id) === "SUCCESS");
  const outputs = await store.outputs(run.runId, succeeded);
  const states = new Map<string, NodeState>(
    named.map((id) => [id, { status: statusOf(id), output: statusOf(id) === "SUCCESS" ? outputs.get(id) ?? {} : null }]),
  );
  const nodeOutputs = Object.fromEntries(succeeded.map((id) => [id, outputs.get(id) ?? {}]));
  return {
    ports,
    runId: run.runId,
    workflowId: run.workflowId,
    accountId: run.accountId,
    graph: run.graph,
    mode: run.mode ?? "live",
    trigger: run.trigger ?? "manual",
    ledgerRunId: run.ledgerRunId ?? run.runId,
    triggerBody: run.triggerBody,
    emailIdentity: run.emailIdentity ?? undefined,
    nodeState: (id) => states.get(id),
    nodeOutputs: () => nodeOutputs,
    templateContext: (field, item) => ({
      node: (id: string) => states.get(id),
      nodeId: node.id,
      field,
      ...(item ? { item: item.value, itemIndex: item.index } : {}),
    }),
    log: (level, message) => store.log(run.runId, level, message, node.id),
    shouldStop: async () => (await store.stopReason(run.runId)) !== null,
  };
}

/** Outputs of the SUCCESS nodes that `text` names (the `nodes` scope of an edge condition). */
export async function namedOutputs(store: RunStore, run: RunInfo, text: string): Promise<Record<string, Record<string, unknown>>> {
  const outputs = await store.outputs(run.runId, namedNodeIds(run.graph, text));
  return Object.fromEntries(outputs);
}
