import { z } from "zod";
import type { OperationSpec } from "@/lib/http/openapi";

/**
 * What an API key may be granted. Each operation of the API names the one scope it needs (its `scope` beside its
 * schemas); "person" operations (the account, its keys and senders, the AI provider, Google) take only a person's
 * access token or session.
 */
export const apiKeyScopes = [
  "workflows:read",
  "workflows:write",
  "runs:read",
  "runs:write",
  "uploads:read",
  "uploads:write",
  "suppressions:read",
  "suppressions:write",
  "webhooks:read",
  "webhooks:write",
  "senders:read",
] as const;
export type ApiKeyScope = (typeof apiKeyScopes)[number];

/** What an authenticated operation requires: one key scope, or a person (keys refused whatever their scopes). */
export type OperationScope = ApiKeyScope | "person";

export const API_KEY_PREFIX = "fmk_";
export const MAX_LIVE_API_KEYS = 50;

const NO_CONTROL_CHARACTERS = /^[^\p{Cc}]*$/u;

export const createApiKeyBody = z.strictObject({
  name: z
    .string()
    .trim()
    .min(1, "Name the key (where it is used, e.g. \"CI deploy\")")
    .max(100, "The name must be at most 100 characters")
    .regex(NO_CONTROL_CHARACTERS, "The name must not contain control characters"),
  scopes: z
    .array(z.enum(apiKeyScopes, { error: `Unknown scope: use one of ${apiKeyScopes.join(", ")}` }))
    .min(1, "Grant at least one scope")
    .max(apiKeyScopes.length)
    .describe("What the key may do; see the `x-required-scope` of each operation"),
  workflowIds: z
    .array(z.string().min(1).max(100))
    .min(1, "List at least one workflow, or leave workflowIds out for every workflow")
    .max(100, "At most 100 workflows per key")
    .optional()
    .describe("Confines the key to these workflows (and their runs); such a key cannot create workflows. Omitted: every workflow"),
  expiresInDays: z
    .number()
    .int("expiresInDays must be a whole number of days")
    .min(1, "expiresInDays must be between 1 and 365")
    .max(365, "expiresInDays must be between 1 and 365")
    .optional()
    .describe("1–365; omitted: the key does not expire"),
});
export type CreateApiKeyInput = z.output<typeof createApiKeyBody>;

export const apiKeyView = z.object({
  id: z.string().describe("key_…"),
  name: z.string(),
  prefix: z.string().describe("The key's first characters (fmk_ and 8 more), to tell keys apart"),
  scopes: z.array(z.enum(apiKeyScopes)),
  workflowIds: z.array(z.string()).nullable().describe("null: every workflow of the account"),
  expiresAt: z.string().nullable(),
  lastUsedAt: z.string().nullable().describe("Updated at most once a minute"),
  createdAt: z.string(),
});
export type ApiKeyView = z.output<typeof apiKeyView>;

export const createdApiKeyView = apiKeyView.omit({ lastUsedAt: true }).extend({
  key: z.string().describe("fmk_… — shown only in this answer: store it now"),
});
export type CreatedApiKeyView = z.output<typeof createdApiKeyView>;

export const apiKeyListResponse = z.object({ items: z.array(apiKeyView) });

const tag = "API keys";

export const apiKeyOperations: OperationSpec[] = [
  {
    method: "post",
    path: "/api/account/api-keys",
    operationId: "createApiKey",
    summary: "Create an API key (fmk_…, shown once) with scopes and optional workflow confinement and expiry",
    tag,
    auth: true,
    scope: "person",
    body: createApiKeyBody,
    responses: { 201: { description: "Created; `key` is shown only here", schema: createdApiKeyView } },
    errors: ["validation_failed", "api_key_limit_reached"],
  },
  {
    method: "get",
    path: "/api/account/api-keys",
    operationId: "listApiKeys",
    summary: "The account's API keys that are not revoked (expired ones included), newest first",
    tag,
    auth: true,
    scope: "person",
    responses: { 200: { description: "The keys, without their secrets", schema: apiKeyListResponse } },
  },
  {
    method: "delete",
    path: "/api/account/api-keys/:keyId",
    operationId: "revokeApiKey",
    summary: "Revoke an API key: it fails from the very next request",
    tag,
    auth: true,
    scope: "person",
    responses: { 204: { description: "Revoked" } },
    errors: ["not_found"],
  },
];
