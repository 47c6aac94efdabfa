import "server-only";
import { and, eq, gt, inArray, isNull, or, sql } from "drizzle-orm";
import { getDb, type Tx } from "@/db/client";
import { accounts, apiKeys, workflows } from "@/db/schema";
import { generateApiKey } from "@/lib/auth/api-keys";
import { AppError } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { apiKeyScopes, MAX_LIVE_API_KEYS, type CreateApiKeyInput, type CreatedApiKeyView } from "@/lib/schemas/api-keys";
import { apiKeyView } from "./api-key-view";

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * POST /api/account/api-keys: a new key, returned in full this once (only its HMAC is kept). Its workflows must be
 * the account's own; an account holds at most MAX_LIVE_API_KEYS keys that are neither revoked nor expired, counted
 * under a lock on the account row so that parallel requests cannot pass the cap together.
 */
export async function createApiKey(accountId: string, input: CreateApiKeyInput): Promise<CreatedApiKeyView> {
  const db = await getDb();
  const { key, prefix, hash } = generateApiKey();
  const row = await db.transaction(async (tx) => {
    await tx.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId)).for("update");
    const workflowIds = input.workflowIds ? await ownWorkflows(tx, accountId, input.workflowIds) : null;
    await assertBelowCap(tx, accountId);
    const [inserted] = await tx
      .insert(apiKeys)
      .values({
        id: newId("key"),
        accountId,
        name: input.name,
        keyHash: hash,
        prefix,
        // Stored in the canonical order, without repeats.
        scopes: apiKeyScopes.filter((s) => input.scopes.includes(s)),
        workflowIds,
        expiresAt: input.expiresInDays === undefined ? null : new Date(Date.now() + input.expiresInDays * DAY_MS),
      })
      .returning();
    return inserted;
  });
  const { lastUsedAt: _unused, ...view } = apiKeyView(row);
  return { ...view, key };
}

/** The listed workflow ids, without repeats, or 422 naming each one that is not a live workflow of the account. */
async function ownWorkflows(tx: Tx, accountId: string, ids: string[]): Promise<string[]> {
  const unique = [...new Set(ids)];
  const found = await tx
    .select({ id: workflows.id })
    .from(workflows)
    .where(and(eq(workflows.accountId, accountId), isNull(workflows.deletedAt), inArray(workflows.id, unique)));
  const known = new Set(found.map((w) => w.id));
  const errors = ids.flatMap((id, index) =>
    known.has(id) ? [] : [{ path: `workflowIds[${index}]`, code: "unknown_workflow", message: `Unknown workflow ${id.slice(0, 100)}` }],
  );
  if (errors.length > 0) throw new AppError("validation_failed", "The request is not valid: see `errors`.", { errors });
  return unique;
}

async function assertBelowCap(tx: Tx, accountId: string): Promise<void> {
  const [{ live }] = await tx
    .select({ live: sql<number>`count(*)`.mapWith(Number) })
    .from(apiKeys)
    .where(and(
      eq(apiKeys.accountId, accountId),
      isNull(apiKeys.revokedAt),
      or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, sql`now()`)),
    ));
  if (live >= MAX_LIVE_API_KEYS) {
    throw new AppError(
      "api_key_limit_reached",
      `An account may hold at most ${MAX_LIVE_API_KEYS} live API keys: revoke one you no longer use first.`,
    );
  }
}
