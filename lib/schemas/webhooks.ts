import { z } from "zod";
import type { OperationSpec } from "@/lib/http/openapi";
import { paginationQuery } from "@/lib/http/pagination";

export const webhookEvents = ["run.succeeded", "run.failed"] as const;
export type WebhookEvent = (typeof webhookEvents)[number];

export const createWebhookBody = z.strictObject({
  url: z
    .string()
    .trim()
    .min(1, "Enter the URL that receives the events")
    .max(2000, "The URL must be at most 2000 characters")
    .describe("https:// and a public address (http and private addresses only when ALLOW_PRIVATE_NETWORK_TARGETS=true)"),
  events: z
    .array(z.enum(webhookEvents))
    .min(1, "Choose at least one event")
    .max(webhookEvents.length)
    .optional()
    .describe("Defaults to both events"),
  workflowId: z
    .string()
    .max(100)
    .nullable()
    .optional()
    .describe("Only runs of this workflow (one of the account's); omitted or null: every workflow of the account"),
});

export const webhookView = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.enum(webhookEvents)),
  workflowId: z.string().nullable(),
  createdAt: z.string(),
});

export const createdWebhookView = webhookView.extend({
  secret: z.string().describe("whsec_… signing secret (Standard Webhooks); shown only in this answer"),
});

export const webhookListResponse = z.object({ items: z.array(webhookView), nextCursor: z.string().nullable() });

export const deliveryView = z.object({
  id: z.string().describe("Also the `webhook-id` header of every attempt of this delivery"),
  event: z.enum(webhookEvents),
  runId: z.string(),
  status: z.enum(["pending", "succeeded", "failed"]),
  attempts: z.number().int(),
  lastStatusCode: z.number().int().nullable(),
  lastError: z.string().nullable(),
  nextAttemptAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const deliveryListResponse = z.object({ items: z.array(deliveryView), nextCursor: z.string().nullable() });

export const webhookListQuery = z.strictObject(paginationQuery);

const tag = "Webhooks";

export const webhooksOperations: OperationSpec[] = [
  {
    method: "post",
    path: "/api/webhooks",
    operationId: "createWebhook",
    summary: "Register a URL for run.succeeded / run.failed events (Standard Webhooks signatures)",
    tag,
    auth: true,
    scope: "webhooks:write",
    body: createWebhookBody,
    responses: { 201: { description: "Created; `secret` is shown only here", schema: createdWebhookView } },
    // forbidden: an API key confined to some workflows registers webhooks only for one of them.
    errors: ["validation_failed", "forbidden"],
  },
  {
    method: "get",
    path: "/api/webhooks",
    operationId: "listWebhooks",
    summary: "The account's webhooks, newest first (secrets are never shown again)",
    tag,
    auth: true,
    scope: "webhooks:read",
    query: webhookListQuery,
    responses: { 200: { description: "Webhooks", schema: webhookListResponse } },
  },
  {
    method: "delete",
    path: "/api/webhooks/:webhookId",
    operationId: "deleteWebhook",
    summary: "Delete a webhook; its pending deliveries are dropped",
    tag,
    auth: true,
    scope: "webhooks:write",
    responses: { 204: { description: "Deleted" } },
    errors: ["not_found"],
  },
  {
    method: "get",
    path: "/api/webhooks/:webhookId/deliveries",
    operationId: "listWebhookDeliveries",
    summary: "Recent deliveries of a webhook, newest first",
    tag,
    auth: true,
    scope: "webhooks:read",
    query: webhookListQuery,
    responses: { 200: { description: "Deliveries", schema: deliveryListResponse } },
    errors: ["not_found"],
  },
];
