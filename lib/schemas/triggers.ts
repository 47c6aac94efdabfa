import { z } from "zod";
import type { OperationSpec } from "@/lib/http/openapi";

// Triggers: a workflow's schedule and its inbound hooks.

const timestamp = z.string().describe("ISO 8601 UTC");

/**
 * The shape of a schedule in POST/PATCH /api/workflows. Its meaning (a 5-field cron that matches some date, a known
 * time zone) is checked by the service, so problems come back as one 422 `invalid_schedule` with sentences.
 */
export const scheduleInput = z
  .strictObject({
    cron: z.string().max(1000).describe('5-field cron (minute hour day-of-month month day-of-week), e.g. "0 9 * * 1-5"'),
    timezone: z.string().max(200).default("UTC").describe('IANA time zone the cron is read in, e.g. "Europe/Paris" (default "UTC")'),
    enabled: z.boolean().default(true).describe("false keeps the schedule but starts no runs"),
  })
  .nullable()
  .describe("How the workflow starts by itself; null for no schedule. At most once a minute.");

export const scheduleSchema = z
  .object({ cron: z.string(), timezone: z.string(), enabled: z.boolean() })
  .nullable()
  .describe("The workflow's schedule, or null");

export const nextRunAtSchema = timestamp.nullable().describe("The next slot the schedule starts a run (null: no schedule, or disabled)");

export const hookIdParams = z.object({ workflowId: z.string(), hookId: z.string() });
export const hookTokenParams = z.object({ token: z.string() });

export const hookDeliverySchema = z.object({
  status: z.number().int().describe("The HTTP status answered: 202, or the refusal's status"),
  runId: z.string().nullable(),
  code: z.string().nullable().describe("The problem's code when the delivery was refused"),
  idempotencyKey: z.string().nullable().describe("The delivery's Idempotency-Key or webhook-id header"),
  sizeBytes: z.number().int(),
  receivedAt: timestamp,
});

export const hookSchema = z.object({
  id: z.string().describe("hook_…"),
  workflowId: z.string(),
  createdAt: timestamp,
  lastDeliveries: z.array(hookDeliverySchema).describe("The newest deliveries first (at most 10)"),
});

export const createdHookSchema = z.object({
  id: z.string(),
  url: z.string().describe("{APP_URL}/api/hooks/{token}: the token is the secret, shown only in this answer"),
  createdAt: timestamp,
});

const tag = "Triggers";

export const triggerOperations: OperationSpec[] = [
  {
    method: "post",
    path: "/api/workflows/:workflowId/hooks",
    operationId: "createHook",
    summary: "Create an inbound hook; its URL (holding the secret token) is shown only in this answer",
    tag,
    auth: true,
    scope: "workflows:write",
    responses: { 201: { description: "Created", schema: createdHookSchema } },
    errors: ["not_found"],
  },
  {
    method: "get",
    path: "/api/workflows/:workflowId/hooks",
    operationId: "listHooks",
    summary: "The workflow's inbound hooks, newest first, without tokens, each with its last deliveries",
    tag,
    auth: true,
    scope: "workflows:read",
    responses: { 200: { description: "The hooks", schema: z.object({ items: z.array(hookSchema) }) } },
    errors: ["not_found"],
  },
  {
    method: "delete",
    path: "/api/workflows/:workflowId/hooks/:hookId",
    operationId: "deleteHook",
    summary: "Revoke an inbound hook: its URL answers 404 from now on",
    tag,
    auth: true,
    scope: "workflows:write",
    responses: { 204: { description: "Revoked" } },
    errors: ["not_found"],
  },
  {
    method: "post",
    path: "/api/hooks/:token",
    operationId: "deliverHook",
    summary:
      "Start a run from an inbound hook: any JSON body (≤ 1 MiB) becomes the TRIGGER's output `{ body }`. No other auth: the token is the secret. " +
      "The same Idempotency-Key or webhook-id header within 24 h answers the same run. Rate limited like POST …/run.",
    tag,
    auth: false,
    body: z.unknown().describe("Any JSON value"),
    headers: [
      { name: "Idempotency-Key", description: "A repeated key within 24 h answers the run of the first delivery" },
      { name: "webhook-id", description: "The same, for senders following the Standard Webhooks spec (Svix, Resend, Clerk…)" },
    ],
    responses: { 202: { description: "Enqueued", schema: z.object({ runId: z.string() }) } },
    errors: ["not_found", "malformed_json", "unsupported_media_type", "payload_too_large", "validation_failed", "rate_limited"],
  },
];
