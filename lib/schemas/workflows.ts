import { z } from "zod";
import { graphSchema } from "@/lib/graph/schema";
import type { OperationSpec } from "@/lib/http/openapi";
import { paginationQuery } from "@/lib/http/pagination";
import { nextRunAtSchema, scheduleInput, scheduleSchema } from "./triggers";

export const workflowIdParams = z.object({ workflowId: z.string() });

export const workflowName = z
  .string()
  .trim()
  .min(1, "The name must not be empty")
  .max(200, "The name has at most 200 characters");

/**
 * The graph is taken as any JSON value here and checked by `validateGraph`, so its problems come back as one
 * `invalid_graph` answer listing every one rather than as zod's `validation_failed`.
 */
const graphInput = z.unknown().refine((value) => value !== undefined, { message: "The graph is required" });

export const createWorkflowBody = z.strictObject({ name: workflowName, graph: graphInput, schedule: scheduleInput.optional() });
export const updateWorkflowBody = z.strictObject({ name: workflowName.optional(), graph: graphInput.optional(), schedule: scheduleInput.optional() });
export const validateGraphBody = z.strictObject({ graph: graphInput });
export const listWorkflowsQuery = z.strictObject(paginationQuery);
export const listWorkflowVersionsQuery = z.strictObject(paginationQuery);
export const workflowVersionParams = z.object({
  workflowId: z.string(),
  version: z.string().regex(/^[1-9][0-9]{0,8}$/, "A version is a whole number from 1").transform(Number),
});

const timestamp = z.string().describe("ISO 8601 UTC");

export const workflowSchema = z.object({
  id: z.string().describe("wf_…"),
  name: z.string(),
  graph: graphSchema.describe("The graph exactly as submitted"),
  version: z.number().int().describe("1 at creation, +1 whenever the graph changes"),
  createdAt: timestamp,
  updatedAt: timestamp,
  schedule: scheduleSchema,
  nextRunAt: nextRunAtSchema,
});

export const workflowListItemSchema = z.object({
  id: z.string(),
  name: z.string(),
  version: z.number().int(),
  createdAt: timestamp,
  updatedAt: timestamp,
  nodeCount: z.number().int(),
  lastRun: z.object({ runId: z.string(), status: z.string(), enqueuedAt: timestamp }).nullable(),
});

export const workflowVersionListItemSchema = z.object({
  version: z.number().int(),
  name: z.string().describe("The workflow's name when this version was saved"),
  nodeCount: z.number().int(),
  createdAt: timestamp,
});

export const workflowVersionSchema = z.object({
  version: z.number().int(),
  name: z.string(),
  graph: graphSchema.describe("The graph of this version (what runs of this version executed)"),
  createdAt: timestamp,
});

const graphErrorSchema = z.object({ path: z.string(), code: z.string(), message: z.string(), nodeId: z.string().optional() });

export const graphValidationSchema = z.object({ valid: z.boolean(), errors: z.array(graphErrorSchema) });

// Documentation shapes: the same fields, with the graph described by its real schema.
const createWorkflowDoc = z.object({ name: workflowName, graph: graphSchema, schedule: scheduleInput.optional() });
const updateWorkflowDoc = z.object({ name: workflowName.optional(), graph: graphSchema.optional(), schedule: scheduleInput.optional() });
const validateGraphDoc = z.object({ graph: graphSchema });

const tag = "Workflows";

export const workflowOperations: OperationSpec[] = [
  {
    method: "post",
    path: "/api/workflows",
    operationId: "createWorkflow",
    summary: "Create a workflow (the graph is validated; every problem is listed)",
    tag,
    auth: true,
    scope: "workflows:write",
    workflowCreating: true,
    body: createWorkflowDoc,
    responses: { 201: { description: "Created", schema: workflowSchema } },
    errors: ["invalid_graph", "invalid_schedule", "validation_failed", "payload_too_large"],
  },
  {
    method: "get",
    path: "/api/workflows",
    operationId: "listWorkflows",
    summary: "List workflows, most recently updated first, with their last run",
    tag,
    auth: true,
    scope: "workflows:read",
    query: listWorkflowsQuery,
    responses: { 200: { description: "A page of workflows", schema: z.object({ items: z.array(workflowListItemSchema), nextCursor: z.string().nullable() }) } },
    errors: ["validation_failed"],
  },
  {
    method: "post",
    path: "/api/workflows/validate",
    operationId: "validateGraph",
    summary: "Validate a graph without saving it",
    tag,
    auth: true,
    scope: "workflows:read",
    body: validateGraphDoc,
    responses: { 200: { description: "The verdict and every problem found", schema: graphValidationSchema } },
    errors: ["validation_failed", "payload_too_large"],
  },
  {
    method: "get",
    path: "/api/workflows/:workflowId",
    operationId: "getWorkflow",
    summary: "One workflow with its graph",
    tag,
    auth: true,
    scope: "workflows:read",
    responses: { 200: { description: "The workflow", schema: workflowSchema } },
    errors: ["not_found"],
  },
  {
    method: "patch",
    path: "/api/workflows/:workflowId",
    operationId: "updateWorkflow",
    summary: "Rename a workflow and/or replace its graph (version +1 when the graph changes)",
    tag,
    auth: true,
    scope: "workflows:write",
    body: updateWorkflowDoc,
    responses: { 200: { description: "The updated workflow", schema: workflowSchema } },
    errors: ["not_found", "invalid_graph", "invalid_schedule", "validation_failed", "payload_too_large"],
  },
  {
    method: "delete",
    path: "/api/workflows/:workflowId",
    operationId: "deleteWorkflow",
    summary: "Delete a workflow; its pending runs fail with \"Workflow deleted\", its run history stays readable",
    tag,
    auth: true,
    scope: "workflows:write",
    responses: { 204: { description: "Deleted" } },
    errors: ["not_found"],
  },
  {
    method: "get",
    path: "/api/workflows/:workflowId/versions",
    operationId: "listWorkflowVersions",
    summary: "The stored versions of a workflow's graph, newest first (restore one by PATCHing its graph)",
    tag,
    auth: true,
    scope: "workflows:read",
    query: listWorkflowVersionsQuery,
    responses: { 200: { description: "A page of versions", schema: z.object({ items: z.array(workflowVersionListItemSchema), nextCursor: z.string().nullable() }) } },
    errors: ["not_found", "validation_failed"],
  },
  {
    method: "get",
    path: "/api/workflows/:workflowId/versions/:version",
    operationId: "getWorkflowVersion",
    summary: "One version of a workflow: its name and graph (runs name it as workflowVersion)",
    tag,
    auth: true,
    scope: "workflows:read",
    responses: { 200: { description: "The version", schema: workflowVersionSchema } },
    errors: ["not_found", "validation_failed"],
  },
  {
    method: "post",
    path: "/api/workflows/:workflowId/duplicate",
    operationId: "duplicateWorkflow",
    summary: "Copy a workflow as \"Copy of <name>\" with the same graph (version 1, no schedule, no hooks)",
    tag,
    auth: true,
    scope: "workflows:write",
    workflowCreating: true,
    responses: { 201: { description: "The new workflow", schema: workflowSchema } },
    errors: ["not_found"],
  },
  {
    method: "get",
    path: "/api/schemas/graph",
    operationId: "getGraphJsonSchema",
    summary: "The workflow graph as JSON Schema (draft 2020-12), for editors and integrators",
    tag,
    auth: false,
    responses: { 200: { description: "JSON Schema" } },
  },
];
