import { z } from "zod";
import type { OperationSpec } from "@/lib/http/openapi";

// AI for every item: the records of an AI node's items.

export const aiItemStatus = z.enum(["pending", "done", "failed", "skipped"]);

export const aiItemsQuery = z.strictObject({
  status: aiItemStatus.optional(),
  offset: z.coerce.number().int().min(0).max(10_000_000).default(0),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

export const aiItemRecord = z.object({
  index: z.number().int(),
  status: aiItemStatus,
  output: z.record(z.string(), z.unknown()).nullable().describe("The declared fields the model answered"),
  error: z.string().nullable(),
  inputTokens: z.number().int().nullable(),
  outputTokens: z.number().int().nullable(),
  reused: z.boolean().describe("Answered by an identical earlier request (reuseAnswersDays): not asked, not paid"),
});

export const aiItemsResponse = z.object({
  items: z.array(aiItemRecord),
  total: z.number().int(),
  counts: z.record(aiItemStatus, z.number().int()),
  forEach: z.string().describe("The node's forEach in the run's snapshot: the list whose elements the items are"),
});

export const aiOperations: OperationSpec[] = [
  {
    method: "get",
    path: "/api/workflows/runs/:runId/nodes/:nodeId/items",
    operationId: "listRunAiItems",
    tag: "Runs",
    auth: true,
    scope: "runs:read",
    summary: "Every item of an AI node with forEach: its status (pending, done, failed, skipped), answer, error and tokens",
    query: aiItemsQuery,
    responses: { 200: { description: "A page of items and the counts per status", schema: aiItemsResponse } },
    errors: ["not_found", "output_expired"],
  },
];
