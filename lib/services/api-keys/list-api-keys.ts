import "server-only";
import { and, desc, eq, isNull } from "drizzle-orm";
import { getDb } from "@/db/client";
import { apiKeys } from "@/db/schema";
import type { ApiKeyView } from "@/lib/schemas/api-keys";
import { apiKeyView } from "./api-key-view";

/**
 * GET /api/account/api-keys: every key not revoked, newest first, expired ones included (so that a person sees why a
 * script stopped). At most MAX_LIVE_API_KEYS live keys exist, so the list needs no pages.
 */
export async function listApiKeys(accountId: string): Promise<{ items: ApiKeyView[] }> {
  const db = await getDb();
  const rows = await db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.accountId, accountId), isNull(apiKeys.revokedAt)))
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
    .limit(1000);
  return { items: rows.map(apiKeyView) };
}
