import type { NodeStatus, RunMode, RunTrigger } from "@/lib/schemas/runs";
import type { Graph, GraphNode, NodeType } from "@/lib/graph/schema";
import type { TemplateContext } from "@/lib/graph/templates";
import type { NodePorts } from "./ports";

export type LogLevel = "debug" | "info" | "warn" | "error";

export type NodeOf<T extends NodeType> = Extract<GraphNode, { type: T }>;

export type NodeState = { status: NodeStatus; output: Record<string, unknown> | null };

/** What a node executor may use: the run's identity, its other nodes' results, a log, and narrow ports (no database). */
export type NodeRuntime = {
  ports: NodePorts;
  runId: string;
  workflowId: string;
  accountId: string;
  graph: Graph;
  /** `preview`: OUTPUT renders and records every email but sends none. */
  mode: RunMode;
  trigger: RunTrigger;
  /** The run whose send ledger this run shares (the first run of its retry chain; the run itself otherwise). */
  ledgerRunId: string;
  /** An inbound hook's JSON body (TRIGGER output `{ body }`); undefined for other triggers. */
  triggerBody: unknown;
  /**
   * The APP_URL and sender the run's emails are built with, fixed when the run was first claimed: an instance with
   * other settings that resumes the run sends the same bytes under the same idempotency keys. Undefined: this
   * instance's settings. `defaultSenderId`: the account's default sender when the run was first claimed (null: none),
   * so that a resumed or retried run sends through the transport it began with, whatever the default is now.
   */
  emailIdentity?: { appUrl: string; from: string; defaultSenderId?: string | null };
  /** Status and (for SUCCESS) output of the nodes this node's data names. */
  nodeState(id: string): NodeState | undefined;
  /** Outputs of SUCCESS nodes, keyed by id (the `nodes` scope of expressions). */
  nodeOutputs(): Record<string, Record<string, unknown>>;
  /** Context for rendering this node's `field` (per item in an OUTPUT node). */
  templateContext(field: string, item?: { value: unknown; index: number }): TemplateContext;
  log(level: LogLevel, message: string): Promise<void>;
  /**
   * Whether the run must stop now (a cancel was asked, or this process is handing its runs back): long waits inside a
   * node (a provider's Retry-After, backoff) ask it every half second so a cancel stops the node within seconds.
   */
  shouldStop(): Promise<boolean>;
};

/** A finished node: its output is stored in Postgres; counters feed the run's `result`. */
export type NodeOutcome = {
  kind: "done";
  output: Record<string, unknown>;
  itemsIn?: number;
  itemsOut?: number;
  /** A line for the run's log, written with the node's result (before its "succeeded" line). */
  log?: string;
};

/** A node that continues in batches, each its own durable step (OUTPUT: 100 emails per step). */
export type BatchedOutcome = { kind: "batched"; batches: number };

export interface NodeExecutor<T extends NodeType = NodeType> {
  execute(node: NodeOf<T>, runtime: NodeRuntime): Promise<NodeOutcome | BatchedOutcome>;
  /** "stopped": the batch was not sent because the run must stop (runtime.shouldStop) while it waited. */
  runBatch?(node: NodeOf<T>, runtime: NodeRuntime, batch: number): Promise<void | "stopped">;
  complete?(node: NodeOf<T>, runtime: NodeRuntime): Promise<NodeOutcome>;
  /**
   * The node's failure sentence once every batch under way has ended: a batch that failed wrote its sentence while its
   * siblings were still sending, so figures in it may be short.
   */
  settleFailure?(node: NodeOf<T>, runtime: NodeRuntime, sentence: string): Promise<string>;
}

/** A failure a person can act on: the node becomes FAILED with this sentence. */
export class NodeError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "NodeError";
  }
}

/**
 * Thrown by a long node that saw `runtime.shouldStop()` say stop (a cancel, or this process handing its runs back):
 * the node is left unfinished, as a cut-short email batch is, and the run stops.
 */
export class NodeStopped extends Error {
  constructor() {
    super("The run was asked to stop");
    this.name = "NodeStopped";
  }
}
