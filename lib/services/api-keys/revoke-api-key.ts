import "server-only";
import { and, eq, isNull } from "drizzle-orm";
import { getDb } from "@/db/client";
import { apiKeys } from "@/db/schema";
import { notFound } from "@/lib/errors";

/**
 * DELETE /api/account/api-keys/:keyId: the key is refused from the very next request on every instance (each use
 * reads revoked_at). The row stays, so that the key's next use is told "revoked" rather than "not valid".
 */
export async function revokeApiKey(accountId: string, keyId: string): Promise<void> {
  const db = await getDb();
  const revoked = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.accountId, accountId), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  if (revoked.length === 0) throw notFound("API key");
}
