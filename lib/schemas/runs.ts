import { z } from "zod";
import type { OperationSpec } from "@/lib/http/openapi";
import { paginationQuery } from "@/lib/http/pagination";
import { runRequestBody } from "./sending";

export const runStatus = z.enum(["PENDING", "RUNNING", "SUCCESS", "FAILED"]);
const runTrigger = z.enum(["manual", "schedule", "hook", "retry", "send", "resend_unknown"]);
const nodeStatus = z.enum(["PENDING", "RUNNING", "SUCCESS", "FAILED", "SKIPPED"]);
/**
 * A preview renders and records every email but sends none; an estimate executes up to the AI nodes, asks the model
 * for a sample of items and extrapolates the tokens and cost (everything after an AI node is SKIPPED).
 */
const runMode = z.enum(["live", "preview", "estimate"]);

export type RunStatus = z.infer<typeof runStatus>;
export type NodeStatus = z.infer<typeof nodeStatus>;
/** How a run was started. */
export type RunTrigger = z.infer<typeof runTrigger>;
export type RunMode = z.infer<typeof runMode>;

const runResult = z.object({
  emailsSent: z.number().int(),
  filteredOut: z.number().int(),
  totalRows: z.number().int().describe("Rows produced by the DATA_SOURCE nodes"),
  suppressed: z.number().int().optional().describe("Emails not sent: the address is on the account's suppression list"),
  duplicates: z.number().int().optional().describe("Emails not sent: the same address came up again in the node"),
  emailsPlanned: z.number().int().optional().describe("Preview runs only: the emails a live run would send"),
  ai: z
    .object({ calls: z.number().int(), inputTokens: z.number().int(), outputTokens: z.number().int(), costUsd: z.number().nullable() })
    .optional()
    .describe("Runs with AI nodes: their paid model calls, tokens and cost (null when no price is known)"),
  estimate: z.record(z.string(), z.unknown()).optional().describe("An estimate run's figures per AI node and in total"),
  failed: z.number().int().optional().describe("Emails the provider refused for good (one recipient each); present when not zero"),
  unknown: z.number().int().optional().describe("SMTP/SES emails whose call a crash interrupted: not sent again (see resend-unknown); present when not zero"),
});
/** What a finished run counted (runs.result). */
export type RunResult = z.infer<typeof runResult>;

const enqueueRunResponse = z.object({
  runId: z.string(),
  workflowId: z.string(),
  status: runStatus.describe("PENDING for a new run; a replayed Idempotency-Key answers the run's current status"),
  enqueuedAt: z.string(),
});

export const nodeResultSchema = z.object({
  type: z.string(),
  status: nodeStatus,
  output: z.record(z.string(), z.unknown()).nullable(),
  outputTruncated: z.boolean().describe("Arrays in `output` are cut to 100 elements; read the rest via the output endpoint"),
  error: z.string().nullable(),
  startedAt: z.string().nullable(),
  completedAt: z.string().nullable(),
  itemsIn: z.number().int().optional(),
  itemsOut: z.number().int().optional(),
  reused: z.literal(true).optional().describe("Copied from the run this one retries or sends; not executed again (its times are the original's)"),
  progress: z
    .union([z.object({ sent: z.number().int(), total: z.number().int() }), z.object({ done: z.number().int(), total: z.number().int() })])
    .optional()
    .describe("A running OUTPUT node's progress `{ sent, total }`; a running AI node with forEach's `{ done, total }` (items answered or failed)"),
});

export const runLogSchema = z.object({
  at: z.string(),
  level: z.enum(["debug", "info", "warn", "error"]),
  nodeId: z.string().optional(),
  message: z.string(),
});

const runBase = {
  runId: z.string(),
  workflowId: z.string(),
  workflowVersion: z.number().int(),
  status: runStatus,
  result: runResult.optional(),
  error: z.string().optional(),
  enqueuedAt: z.string(),
  startedAt: z.string().nullable(),
  completedAt: z.string().nullable(),
  trigger: runTrigger,
  mode: runMode,
  retryOf: z.string().optional().describe("The FAILED run this run retries"),
  sendOf: z.string().optional().describe("The preview run this live run sends"),
  resendOf: z.string().optional().describe("The run whose emails of unknown fate this live run sends again"),
  queuePosition: z.number().int().min(1).optional().describe("PENDING runs only: 1 = the next run of its workflow to start"),
  cancelRequested: z.literal(true).optional().describe("RUNNING runs only: a cancel was asked; the run stops at its next step"),
  outputExpired: z.literal(true).optional().describe("Node outputs and per-email records were removed (RUN_OUTPUT_RETENTION_DAYS)"),
};

export const runResponse = z.object({
  ...runBase,
  nodes: z.union([
    z.record(z.string(), nodeResultSchema),
    z.array(nodeResultSchema.extend({ id: z.string() })),
  ]),
  logs: z.array(runLogSchema),
});

export const runSummary = z.object(runBase);
const runListResponse = z.object({ items: z.array(runSummary), nextCursor: z.string().nullable() });
export const accountRunListResponse = z.object({
  items: z.array(runSummary.extend({ workflowName: z.string() })),
  nextCursor: z.string().nullable(),
});

export const listAccountRunsQuery = z.strictObject({
  status: runStatus.optional(),
  workflowId: z.string().max(100).optional(),
  ...paginationQuery,
});

const retryRunResponse = z.object({
  runId: z.string(),
  workflowId: z.string(),
  status: z.literal("PENDING"),
  enqueuedAt: z.string(),
  retryOf: z.string(),
});

const cancelRunResponse = z.object({
  runId: z.string(),
  workflowId: z.string(),
  status: runStatus.describe("FAILED when a PENDING run was cancelled; RUNNING until the executor stops it (≤ 5 s)"),
  cancelRequested: z.literal(true),
});

export const getRunQuery = z.strictObject({ nodes: z.enum(["map", "array"]).default("map") });

export const listRunsQuery = z.strictObject({
  status: runStatus.optional(),
  ...paginationQuery,
});

export const nodeOutputQuery = z.strictObject({
  field: z.string().max(200).optional().describe("Dot path of the array inside the output; defaults to its only array field"),
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

const nodeOutputResponse = z.object({ items: z.array(z.unknown()), total: z.number().int() });

export const runsOperations: OperationSpec[] = [
  {
    method: "post",
    path: "/api/workflows/:workflowId/run",
    operationId: "enqueueRun",
    summary: "Enqueue a run of the workflow (returns at once; poll the run)",
    tag: "Runs",
    auth: true,
    scope: "runs:write",
    headers: [{ name: "Idempotency-Key", description: "The same key within 24 h returns the same run" }],
    // No body (or `{}`) is a live run; `{ "mode": "preview", "until"? }` a preview.
    body: runRequestBody,
    bodyOptional: true,
    responses: {
      202: { description: "Enqueued", schema: enqueueRunResponse, headers: ["Location", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"] },
    },
    errors: ["not_found", "rate_limited"],
  },
  {
    method: "get",
    path: "/api/workflows/runs/:runId",
    operationId: "getRun",
    summary: "A run with its node results and logs",
    tag: "Runs",
    auth: true,
    scope: "runs:read",
    query: getRunQuery,
    responses: { 200: { description: "The run", schema: runResponse } },
    errors: ["not_found"],
  },
  {
    method: "get",
    path: "/api/workflows/runs/:runId/nodes/:nodeId/output",
    operationId: "getRunNodeOutput",
    summary: "A page of a large array in a node's output",
    tag: "Runs",
    auth: true,
    scope: "runs:read",
    query: nodeOutputQuery,
    responses: { 200: { description: "A page of the array", schema: nodeOutputResponse } },
    errors: ["not_found", "output_expired"],
  },
  {
    method: "get",
    path: "/api/workflows/:workflowId/runs",
    operationId: "listWorkflowRuns",
    summary: "Runs of a workflow, newest first (without node outputs)",
    tag: "Runs",
    auth: true,
    scope: "runs:read",
    query: listRunsQuery,
    responses: { 200: { description: "A page of runs", schema: runListResponse } },
    errors: ["not_found"],
  },
  {
    method: "get",
    path: "/api/runs",
    operationId: "listRuns",
    summary: "The account's runs across workflows, newest first, with workflowName (filters: status, workflowId)",
    tag: "Runs",
    auth: true,
    scope: "runs:read",
    query: listAccountRunsQuery,
    responses: { 200: { description: "A page of runs", schema: accountRunListResponse } },
    errors: ["validation_failed"],
  },
  {
    method: "post",
    path: "/api/workflows/runs/:runId/retry",
    operationId: "retryRun",
    summary: "Retry a FAILED run: a new run that reuses its successful nodes and never re-sends an email of its retry chain",
    tag: "Runs",
    auth: true,
    scope: "runs:write",
    responses: { 202: { description: "Enqueued at the tail of the workflow's queue", schema: retryRunResponse, headers: ["Location"] } },
    errors: ["not_found", "run_not_failed", "output_expired", "conflict"],
  },
  {
    method: "post",
    path: "/api/workflows/runs/:runId/cancel",
    operationId: "cancelRun",
    summary: "Cancel a PENDING (at once) or RUNNING run (stops before its next node or email batch, within 5 s)",
    tag: "Runs",
    auth: true,
    scope: "runs:write",
    responses: { 202: { description: "Cancelled, or cancel requested", schema: cancelRunResponse } },
    errors: ["not_found", "run_finished"],
  },
];
