// Response shapes of the REST API. The graph types come from lib/graph/schema.ts
// (types only); the editor's graph is a draft, its node data not yet validated.
// Values from the definitions themselves: lib/graph/schema.ts would bring zod into the browser bundle.
export { NODE_TYPES } from "@/lib/nodes/definitions";
export { AI_OUTPUT_TYPES } from "@/lib/nodes/ai/definition";
import type { AiEstimate, AiUsage } from "./ai";
export type { AiOutputField, AiOutputType, GraphEdge, NodeType } from "@/lib/graph/schema";
export type { GraphDraft as Graph, GraphNodeDraft as GraphNode } from "@/lib/graph/schema";
import type { GraphDraft as Graph, NodeType } from "@/lib/graph/schema";

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  tokenType: "Bearer";
}

export interface Account {
  id: string;
  email: string;
  fullName: string;
  createdAt: string;
  ai: null | { provider: string; model: string | null; baseUrl: string | null; keyLast4: string };
}

export interface UploadMeta {
  uploadId: string;
  filename: string;
  rowCount: number;
  columns: string[];
  sizeBytes: number;
  createdAt: string;
}
export interface UploadDetail extends UploadMeta {
  preview: Record<string, string>[];
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export type RunStatus = "PENDING" | "RUNNING" | "SUCCESS" | "FAILED";
export type NodeStatus = "PENDING" | "RUNNING" | "SUCCESS" | "FAILED" | "SKIPPED";

export interface WorkflowSummary {
  id: string;
  name: string;
  version: number;
  createdAt: string;
  updatedAt: string;
  nodeCount: number;
  lastRun: null | { runId: string; status: RunStatus; enqueuedAt: string };
}
export interface Workflow {
  id: string;
  name: string;
  graph: Graph;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface ValidationResult {
  valid: boolean;
  errors: { path: string; code: string; message: string; nodeId?: string }[];
}

export interface NodeResult {
  type: NodeType;
  status: NodeStatus;
  output: Record<string, unknown> | null;
  outputTruncated: boolean;
  error: string | null;
  startedAt: string | null;
  completedAt: string | null;
  itemsIn?: number | null;
  itemsOut?: number | null;
  /** A running OUTPUT node's `{ sent, total }`; a running AI node with forEach's `{ done, total }`. */
  progress?: { sent: number; total: number } | { done: number; total: number };
  reused?: boolean;
}
export interface RunLog {
  at: string;
  level: string;
  nodeId?: string | null;
  message: string;
}
export interface Run {
  runId: string;
  workflowId: string;
  workflowVersion: number;
  status: RunStatus;
  nodes: Record<string, NodeResult>;
  result?: {
    emailsSent: number;
    filteredOut: number;
    totalRows: number;
    suppressed?: number;
    duplicates?: number;
    emailsPlanned?: number;
    /** What the run's AI nodes used, summed. */
    ai?: AiUsage;
    /** An estimate run's figures per AI node and in total. */
    estimate?: AiEstimate;
  } | null;
  mode?: "live" | "preview" | "estimate";
  /** How the run started. */
  trigger?: "manual" | "schedule" | "hook" | "retry" | "send" | "resend_unknown";
  retryOf?: string;
  sendOf?: string;
  resendOf?: string;
  /** PENDING runs: 1 = the next run of its workflow to start. */
  queuePosition?: number;
  /** RUNNING runs: a cancel was asked; it stops at its next step. */
  cancelRequested?: boolean;
  /** Node outputs and per-email records were removed after RUN_OUTPUT_RETENTION_DAYS. */
  outputExpired?: boolean;
  error?: string | null;
  logs: RunLog[];
  enqueuedAt: string;
  startedAt: string | null;
  completedAt: string | null;
}
export type RunSummary = Omit<Run, "nodes" | "logs"> & { nodes?: unknown; logs?: unknown };
/** An item of GET /api/runs (every workflow of the account). */
export type AccountRunItem = RunSummary & { workflowName: string };

export interface MailboxMessage {
  id: string;
  from: string;
  to: string;
  subject: string;
  text: string | null;
  html: string | null;
  kind: string;
  /** List-Unsubscribe and List-Unsubscribe-Post of workflow emails. */
  headers?: Record<string, string>;
  createdAt: string;
}

export interface GoogleStatus {
  connected: boolean;
  /** false when this server has no Google client (the other Google endpoints answer 503). */
  configured?: false;
  email?: string;
  scopes?: string[];
  connectedAt?: string;
}
export interface DriveFile {
  id: string;
  name: string;
  mimeType: string;
  modifiedTime: string;
}

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  workflowId: string | null;
  createdAt: string;
  secret?: string;
}
