import "server-only";
import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { accounts } from "@/db/schema";
import { decryptSecret } from "@/lib/crypto";

export type AiProvider = "openai" | "anthropic" | "openai-compatible";
export type AiSettings = {
  provider: AiProvider;
  model: string | null;
  baseUrl: string | null;
  apiKey: string;
  /** Pacing and prices (PUT /api/account/ai-provider); absent or null: not set. */
  requestsPerMinute?: number | null;
  tokensPerMinute?: number | null;
  maxConcurrency?: number | null;
  inputPricePerMillion?: number | null;
  outputPricePerMillion?: number | null;
  maxCostPerRunUsd?: number | null;
};

/** The account's AI provider settings with the key decrypted, or null when no key is configured. */
export async function loadAiSettings(db: Db, accountId: string): Promise<AiSettings | null> {
  const [row] = await db
    .select({
      provider: accounts.aiProvider,
      model: accounts.aiModel,
      baseUrl: accounts.aiBaseUrl,
      key: accounts.aiKeyEncrypted,
      requestsPerMinute: accounts.aiRequestsPerMinute,
      tokensPerMinute: accounts.aiTokensPerMinute,
      maxConcurrency: accounts.aiMaxConcurrency,
      inputPricePerMillion: accounts.aiInputPricePerMillion,
      outputPricePerMillion: accounts.aiOutputPricePerMillion,
      maxCostPerRunUsd: accounts.aiMaxCostPerRunUsd,
    })
    .from(accounts)
    .where(eq(accounts.id, accountId));
  if (!row?.provider || !row.key) return null;
  const { key, provider, ...rest } = row;
  return { ...rest, provider: provider as AiProvider, apiKey: decryptSecret(key) };
}
