import "server-only";
import type { apiKeys } from "@/db/schema";
import type { ApiKeyScope, ApiKeyView } from "@/lib/schemas/api-keys";

export function apiKeyView(row: typeof apiKeys.$inferSelect): ApiKeyView {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes as ApiKeyScope[],
    workflowIds: row.workflowIds,
    expiresAt: row.expiresAt?.toISOString() ?? null,
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}
