import { z } from "zod";
import type { OperationSpec } from "@/lib/http/openapi";
import { paginationQuery } from "@/lib/http/pagination";

export const runStatus = z.enum(["PENDING", "RUNNING", "SUCCESS", "FAILED"]);
export const nodeStatus = z.enum(["PENDING", "RUNNING", "SUCCESS", "FAILED", "SKIPPED"]);

export const runResult = z.object({
  emailsSent: z.number().int(),
  filteredOut: z.number().int(),
  totalRows: z.number().int().describe("Rows produced by the DATA_SOURCE nodes"),
});

export const enqueueRunResponse = z.object({
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
export const runListResponse = z.object({ items: z.array(runSummary), nextCursor: z.string().nullable() });

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

export const nodeOutputResponse = z.object({ items: z.array(z.unknown()), total: z.number().int() });

export const runsOperations: OperationSpec[] = [
  {
    method: "post",
    path: "/api/workflows/:workflowId/run",
    operationId: "enqueueRun",
    summary: "Enqueue a run of the workflow (returns at once; poll the run)",
    tag: "Runs",
    auth: true,
    headers: [{ name: "Idempotency-Key", description: "The same key within 24 h returns the same run" }],
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
    query: nodeOutputQuery,
    responses: { 200: { description: "A page of the array", schema: nodeOutputResponse } },
    errors: ["not_found"],
  },
  {
    method: "get",
    path: "/api/workflows/:workflowId/runs",
    operationId: "listWorkflowRuns",
    summary: "Runs of a workflow, newest first (without node outputs)",
    tag: "Runs",
    auth: true,
    query: listRunsQuery,
    responses: { 200: { description: "A page of runs", schema: runListResponse } },
    errors: ["not_found"],
  },
];
