// Response shapes of the REST API, derived from the zod schemas that validate and document the answers
// (lib/schemas/*; type-only imports: no zod in the browser bundle). The graph types come from lib/graph/schema.ts;
// the editor's graph is a draft, its node data not yet validated.
// Values from the definitions themselves: lib/graph/schema.ts would bring zod into the browser bundle.
export { NODE_TYPES } from "@/lib/nodes/definitions";
export { AI_OUTPUT_TYPES } from "@/lib/nodes/ai/definition";
import type { AiEstimate, AiUsage } from "./ai";
export type { AiOutputField, AiOutputType, GraphEdge, NodeType } from "@/lib/graph/schema";
export type { GraphDraft as Graph, GraphNodeDraft as GraphNode } from "@/lib/graph/schema";
export type { NodeStatus, RunStatus } from "@/lib/schemas/runs";
import type { z } from "zod";
import type { GraphDraft as Graph, NodeType } from "@/lib/graph/schema";
import type * as accounts from "@/lib/schemas/accounts";
import type * as integrations from "@/lib/schemas/integrations";
import type * as runs from "@/lib/schemas/runs";
import type * as uploads from "@/lib/schemas/uploads";
import type * as webhooks from "@/lib/schemas/webhooks";
import type * as workflows from "@/lib/schemas/workflows";

export type TokenPair = z.infer<typeof accounts.tokenPairResponse>;
export type Account = z.infer<typeof accounts.accountResponse>;
export type UploadMeta = z.infer<typeof uploads.uploadSchema>;
export type UploadDetail = z.infer<typeof uploads.uploadDetailSchema>;

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export type WorkflowSummary = z.infer<typeof workflows.workflowListItemSchema>;
/** The editor keeps the graph as a draft (node data not yet validated). */
export type Workflow = Omit<z.infer<typeof workflows.workflowSchema>, "graph"> & { graph: Graph };
export type ValidationResult = z.infer<typeof workflows.graphValidationSchema>;

export type NodeResult = Omit<z.infer<typeof runs.nodeResultSchema>, "type"> & { type: NodeType };
export type RunLog = z.infer<typeof runs.runLogSchema>;
type RunResponse = z.infer<typeof runs.runResponse>;
/** The API documents an estimate's figures as an open object; the UI reads their shape (lib/client/ai.ts). */
type RunResultView = Omit<NonNullable<RunResponse["result"]>, "estimate" | "ai"> & { estimate?: AiEstimate; ai?: AiUsage };
/** GET …/runs/:runId as the UI asks for it (nodes as a map). */
export type Run = Omit<RunResponse, "nodes" | "result"> & { nodes: Record<string, NodeResult>; result?: RunResultView | null };
export type RunSummary = z.infer<typeof runs.runSummary>;
/** An item of GET /api/runs (every workflow of the account). */
export type AccountRunItem = z.infer<typeof runs.accountRunListResponse>["items"][number];

export type MailboxMessage = z.infer<typeof accounts.mailboxMessageResponse>;
export type GoogleStatus = z.infer<typeof integrations.googleStatusResponse>;
export type DriveFile = z.infer<typeof integrations.driveFileItem>;
/** `secret` only in the answer that created it. */
export type Webhook = z.infer<typeof webhooks.webhookView> & { secret?: string };
