import { z } from "zod";
import type { OperationSpec } from "@/lib/http/openapi";
import { paginationQuery } from "@/lib/http/pagination";
import { EMAIL_ADDRESS } from "./email-address";

// preview runs, the emails of a run, the suppression list, one-click unsubscribe, Resend's events.

export const runRequestBody = z.strictObject({
  mode: z
    .enum(["live", "preview", "estimate"])
    .default("live")
    .describe("`preview` renders and records every email but sends none; `estimate` asks the AI nodes' model for `sample` items and extrapolates tokens and cost, sending nothing"),
  sample: z.number().int().min(1).max(20).optional().describe("Estimate only: items asked per AI node (1–20, default 3)"),
  until: z.string().min(1).max(64).optional().describe("Preview only: execute just this node and its ancestors"),
});

/** `sending` and `unknown`: SMTP and SES senders only (a call under way; a call whose fate a crash left unknown). */
export const emailStatus = z.enum(["pending", "sent", "suppressed", "duplicate", "failed", "preview", "sending", "unknown"]);

export const runEmailsQuery = z.strictObject({
  status: emailStatus.optional(),
  offset: z.coerce.number().int().min(0).max(10_000_000).default(0),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

export const runEmailItem = z.object({
  index: z.number().int(),
  to: z.string(),
  subject: z.string(),
  status: emailStatus,
  providerMessageId: z.string().nullable(),
  sentAt: z.string().nullable(),
  error: z.string().nullable(),
  body: z.string().optional().describe("Preview items only: the rendered body"),
  format: z.enum(["text", "html"]).optional(),
});

export const runEmailsResponse = z.object({
  items: z.array(runEmailItem),
  total: z.number().int().describe("Items matching `status` (all items without it)"),
  nextOffset: z
    .number()
    .int()
    .nullable()
    .describe("The `offset` of the next page, null after the last one. A page stops early (fewer than `limit` items) once its subjects, errors and bodies reach 4 MiB: page on with this rather than offset + limit"),
  counts: z.object(Object.fromEntries(emailStatus.options.map((s) => [s, z.number().int()])) as Record<z.infer<typeof emailStatus>, z.ZodNumber>),
});

// The refusal names the value (its path names the index): one bad address in a pasted list of 1,000 is found at once.
const address = z
  .string()
  .trim()
  .toLowerCase()
  .refine((value) => value.length <= 254 && EMAIL_ADDRESS.test(value), {
    error: (issue) => `${JSON.stringify(String(issue.input).slice(0, 80))} is not one valid email address`,
  });

export const suppressionsQuery = z.strictObject({ q: z.string().trim().max(254).optional(), ...paginationQuery });
export const addSuppressionsBody = z.strictObject({ emails: z.array(address).min(1).max(1000) });
export const suppressionItem = z.object({
  email: z.string(),
  reason: z.enum(["unsubscribed", "bounced", "complained", "manual"]),
  createdAt: z.string(),
});
export const suppressionsResponse = z.object({ items: z.array(suppressionItem), nextCursor: z.string().nullable() });
export const addSuppressionsResponse = z.object({ added: z.number().int() });
export const unsubscribeResponse = z.object({ unsubscribed: z.literal(true), email: z.string() });

const tag = "Sending";

export const sendingOperations: OperationSpec[] = [
  {
    method: "get", path: "/api/workflows/runs/:runId/nodes/:nodeId/emails", operationId: "listRunEmails", tag, auth: true, scope: "runs:read",
    summary: "Every email of an OUTPUT node of a run, with its status (sent, suppressed, duplicate, failed, preview, pending)",
    query: runEmailsQuery,
    responses: { 200: { description: "A page of emails and the counts per status", schema: runEmailsResponse } },
    errors: ["not_found", "output_expired"],
  },
  {
    method: "post", path: "/api/workflows/runs/:runId/send", operationId: "sendPreview", tag, auth: true, scope: "runs:write",
    summary: "Send exactly what a SUCCESS preview of the whole workflow rendered (a new live run reusing the preview's node outputs); 409 for a live run, an unfinished or failed preview, a preview already sent, or a `until` (test this node) preview",
    responses: {
      202: {
        description: "The live run, enqueued",
        schema: z.object({ runId: z.string(), workflowId: z.string(), status: z.literal("PENDING"), enqueuedAt: z.string(), sendOf: z.string() }),
        headers: ["Location"],
      },
    },
    errors: ["not_found", "conflict"],
  },
  {
    method: "get", path: "/api/suppressions", operationId: "listSuppressions", tag, auth: true, scope: "suppressions:read",
    summary: "The account's suppression list, newest first (`q` searches the address)", query: suppressionsQuery,
    responses: { 200: { description: "Suppressed addresses", schema: suppressionsResponse } },
  },
  {
    method: "post", path: "/api/suppressions", operationId: "addSuppressions", tag, auth: true, scope: "suppressions:write",
    summary: "Add 1–1000 addresses (reason `manual`); addresses already on the list are not counted", body: addSuppressionsBody,
    responses: { 200: { description: "How many were new", schema: addSuppressionsResponse } },
    errors: ["validation_failed"],
  },
  {
    method: "delete", path: "/api/suppressions/:email", operationId: "removeSuppression", tag, auth: true, scope: "suppressions:write",
    summary: "Take an address off the list", responses: { 204: { description: "Removed" } }, errors: ["not_found"],
  },
  {
    method: "post", path: "/api/unsubscribe/:token", operationId: "unsubscribe", tag, auth: false,
    summary: "RFC 8058 one-click unsubscribe (the List-Unsubscribe address of every workflow email); any body, no auth",
    responses: { 200: { description: "Unsubscribed (again: the same answer)", schema: unsubscribeResponse } },
    errors: ["bad_request"],
  },
  {
    method: "get", path: "/api/unsubscribe/:token", operationId: "unsubscribePage", tag, auth: false,
    summary: "A small HTML page with one Unsubscribe button (never unsubscribes by itself)",
    responses: { 200: { description: "text/html" }, 400: { description: "Not a valid unsubscribe link (text/html)" } },
  },
  {
    method: "post", path: "/api/integrations/resend/events", operationId: "resendEvents", tag, auth: false,
    summary: "Resend's event webhook (Svix-signed with RESEND_WEBHOOK_SECRET): hard bounces and complaints suppress the address",
    responses: { 200: { description: "Accepted", schema: z.object({ handled: z.boolean() }) }, 404: { description: "RESEND_WEBHOOK_SECRET is not set" } },
    errors: ["invalid_token"],
  },
];
