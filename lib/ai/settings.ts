import "server-only";
import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { accounts } from "@/db/schema";
import { decryptSecret } from "@/lib/crypto";

export type AiProvider = "openai" | "anthropic" | "openai-compatible";
export type AiSettings = { provider: AiProvider; model: string | null; baseUrl: string | null; apiKey: string };

/** The account's AI provider settings with the key decrypted, or null when no key is configured. */
export async function loadAiSettings(db: Db, accountId: string): Promise<AiSettings | null> {
  const [row] = await db
    .select({ provider: accounts.aiProvider, model: accounts.aiModel, baseUrl: accounts.aiBaseUrl, key: accounts.aiKeyEncrypted })
    .from(accounts)
    .where(eq(accounts.id, accountId));
  if (!row?.provider || !row.key) return null;
  return { provider: row.provider as AiProvider, model: row.model, baseUrl: row.baseUrl, apiKey: decryptSecret(row.key) };
}
