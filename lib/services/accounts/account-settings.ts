import "server-only";
import { eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { accounts } from "@/db/schema";
import { now as clockNow } from "@/lib/clock";
import { encryptSecret } from "@/lib/crypto";
import { AppError, notFound } from "@/lib/errors";
import { assertSafeTargetUrl } from "@/lib/net/ssrf";
import { DEFAULT_AI_MAX_CONCURRENCY, type AccountView, type AiSettings } from "@/lib/schemas/accounts";

type AccountRow = typeof accounts.$inferSelect;

function aiView(row: AccountRow): AiSettings | null {
  if (!row.aiProvider || !row.aiKeyEncrypted) return null;
  return {
    provider: row.aiProvider as AiSettings["provider"],
    model: row.aiModel,
    baseUrl: row.aiBaseUrl,
    keyLast4: row.aiKeyLast4 ?? "",
    requestsPerMinute: row.aiRequestsPerMinute,
    tokensPerMinute: row.aiTokensPerMinute,
    maxConcurrency: row.aiMaxConcurrency ?? DEFAULT_AI_MAX_CONCURRENCY,
    inputPricePerMillion: row.aiInputPricePerMillion,
    outputPricePerMillion: row.aiOutputPricePerMillion,
    maxCostPerRunUsd: row.aiMaxCostPerRunUsd,
  };
}

function accountView(row: AccountRow): AccountView {
  return { id: row.id, email: row.email, fullName: row.fullName, createdAt: row.createdAt.toISOString(), ai: aiView(row) };
}

async function loadRow(accountId: string): Promise<AccountRow> {
  const db = await getDb();
  const [row] = await db.select().from(accounts).where(eq(accounts.id, accountId));
  if (!row) throw notFound("Account");
  return row;
}

export async function getAccount(accountId: string): Promise<AccountView> {
  return accountView(await loadRow(accountId));
}

export async function updateAccount(accountId: string, input: { fullName?: string }, now = clockNow()): Promise<AccountView> {
  if (input.fullName === undefined) return getAccount(accountId);
  const db = await getDb();
  const [row] = await db.update(accounts).set({ fullName: input.fullName, updatedAt: new Date(now) })
    .where(eq(accounts.id, accountId)).returning();
  if (!row) throw notFound("Account");
  return accountView(row);
}

export type AiProviderInput = {
  provider: AiSettings["provider"];
  apiKey: string;
  model?: string;
  baseUrl?: string;
  requestsPerMinute?: number;
  tokensPerMinute?: number;
  maxConcurrency?: number;
  inputPricePerMillion?: number;
  outputPricePerMillion?: number;
  maxCostPerRunUsd?: number;
};

/** Stores the provider settings; the key is encrypted (AES-256-GCM) and only its last 4 characters come back. */
export async function setAiProvider(accountId: string, input: AiProviderInput, now = clockNow()): Promise<AiSettings> {
  if (input.baseUrl) await assertSafeBaseUrl(input.baseUrl);
  const db = await getDb();
  const [row] = await db.update(accounts).set({
    aiProvider: input.provider,
    aiModel: input.model ?? null,
    aiBaseUrl: input.baseUrl ?? null,
    aiKeyEncrypted: encryptSecret(input.apiKey),
    aiKeyLast4: input.apiKey.slice(-4),
    // A PUT replaces the settings: a limit or price left out is no longer set.
    aiRequestsPerMinute: input.requestsPerMinute ?? null,
    aiTokensPerMinute: input.tokensPerMinute ?? null,
    aiMaxConcurrency: input.maxConcurrency ?? null,
    aiInputPricePerMillion: input.inputPricePerMillion ?? null,
    aiOutputPricePerMillion: input.outputPricePerMillion ?? null,
    aiMaxCostPerRunUsd: input.maxCostPerRunUsd ?? null,
    updatedAt: new Date(now),
  }).where(eq(accounts.id, accountId)).returning();
  if (!row) throw notFound("Account");
  return aiView(row)!;
}

export async function deleteAiProvider(accountId: string, now = clockNow()): Promise<void> {
  const db = await getDb();
  await db.update(accounts).set({
    aiProvider: null, aiModel: null, aiBaseUrl: null, aiKeyEncrypted: null, aiKeyLast4: null, updatedAt: new Date(now),
  }).where(eq(accounts.id, accountId));
}

/** The server will call this address for the account: the shared SSRF guard decides, reported on `baseUrl`. */
async function assertSafeBaseUrl(baseUrl: string): Promise<void> {
  try {
    await assertSafeTargetUrl(baseUrl);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    throw new AppError("validation_failed", error.message, {
      errors: [{ path: "baseUrl", code: "unsafe_url", message: error.message }],
    });
  }
}
