import { z } from "zod";
import type { OperationSpec } from "@/lib/http/openapi";

export const driveFilesQuery = z.strictObject({
  q: z.string().max(200, "The search text must be at most 200 characters").optional(),
});

export const googleStatusResponse = z.union([
  z.object({
    connected: z.literal(true),
    email: z.string(),
    scopes: z.array(z.string()),
    connectedAt: z.string().describe("ISO 8601 UTC"),
  }),
  z.object({
    connected: z.literal(false),
    configured: z
      .literal(false)
      .optional()
      .describe("Present when this server has no Google client (GOOGLE_CLIENT_ID/SECRET unset): linking is not possible"),
    reason: z
      .literal("expired")
      .optional()
      .describe("Present when a link exists but Google refused its refresh token: the person must reconnect"),
    email: z.string().optional().describe("The Google address of the expired link"),
  }),
]);

export const driveFileItem = z.object({
  id: z.string(),
  name: z.string(),
  mimeType: z.string().describe("text/csv or application/vnd.google-apps.spreadsheet"),
  modifiedTime: z.string().nullable(),
});

export const driveFilesResponse = z.object({ items: z.array(driveFileItem) });

const tag = "Google";

export const integrationsOperations: OperationSpec[] = [
  {
    method: "get",
    path: "/api/integrations/google/connect",
    operationId: "connectGoogle",
    summary: "Start linking a Google account: redirects to Google's consent page (PKCE, offline access, 10-minute state)",
    tag,
    auth: true,
    scope: "person",
    responses: { 302: { description: "Redirect to Google's consent page", headers: ["Location"] } },
    errors: ["google_not_configured"],
  },
  {
    method: "get",
    path: "/api/integrations/google/callback",
    operationId: "googleCallback",
    summary: "Google's redirect target: stores the link and redirects to /settings?google=connected (or =error)",
    tag,
    auth: false,
    query: z.object({ code: z.string().optional(), state: z.string().optional(), error: z.string().optional() }),
    responses: { 302: { description: "Redirect to /settings?google=connected or /settings?google=error", headers: ["Location"] } },
  },
  {
    method: "get",
    path: "/api/integrations/google/status",
    operationId: "getGoogleStatus",
    summary: "Whether a Google account is linked, and which",
    tag,
    auth: true,
    scope: "person",
    responses: { 200: { description: "Link status (`configured: false` when this server has no Google client)", schema: googleStatusResponse } },
    errors: [],
  },
  {
    method: "delete",
    path: "/api/integrations/google",
    operationId: "disconnectGoogle",
    summary: "Unlink the Google account (the grant is revoked at Google, best effort)",
    tag,
    auth: true,
    scope: "person",
    responses: { 204: { description: "Unlinked (also when nothing was linked)" } },
  },
  {
    method: "get",
    path: "/api/integrations/google/files",
    operationId: "listGoogleDriveFiles",
    summary: "CSV files and Google Sheets on the linked Drive, newest first (first 100, optional name search `q`)",
    tag,
    auth: true,
    scope: "person",
    query: driveFilesQuery,
    responses: { 200: { description: "Files", schema: driveFilesResponse } },
    errors: ["google_not_connected", "google_not_configured", "service_unavailable"],
  },
];
