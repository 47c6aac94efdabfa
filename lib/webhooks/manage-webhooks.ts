import "server-only";
import { randomBytes } from "node:crypto";
import { and, count, desc, eq, inArray, isNull } from "drizzle-orm";
import type { z } from "zod";
import { getDb } from "@/db/client";
import { webhookDeliveries, webhooks, workflows } from "@/db/schema";
import { encryptSecret } from "@/lib/crypto";
import { AppError, notFound } from "@/lib/errors";
import { decodeCursor, newestFirstAfter, page } from "@/lib/http/pagination";
import { looksLikeId, newId } from "@/lib/ids";
import { assertSafeTargetUrl } from "@/lib/net/ssrf";
import { webhookEvents, type createWebhookBody, type WebhookEvent } from "@/lib/schemas/webhooks";

type WebhookRow = typeof webhooks.$inferSelect;

/** Every finished run fans out to each webhook: a cap keeps one account from turning us into a traffic source. */
export const MAX_WEBHOOKS_PER_ACCOUNT = 25;

export function webhookView(row: WebhookRow) {
  return {
    id: row.id,
    url: row.url,
    events: row.events as WebhookEvent[],
    workflowId: row.workflowId,
    createdAt: row.createdAt.toISOString(),
  };
}

/** A Standard Webhooks secret: `whsec_` and base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/**
 * A workflowId in the body that is unknown, deleted or another account's is a validation error (422, the same
 * answer in all three cases): like an unknown upload in a graph, it is a reference inside the body, not the
 * resource the path names.
 */
async function assertOwnWorkflow(accountId: string, workflowId: string): Promise<void> {
  const db = await getDb();
  const [row] = await db
    .select({ id: workflows.id })
    .from(workflows)
    .where(and(eq(workflows.id, workflowId), eq(workflows.accountId, accountId), isNull(workflows.deletedAt)));
  if (!row) {
    const message = `Workflow ${workflowId} does not exist`;
    throw new AppError("validation_failed", message, { errors: [{ path: "workflowId", code: "unknown_workflow", message }] });
  }
}

async function assertBelowCap(accountId: string): Promise<void> {
  const db = await getDb();
  const [row] = await db
    .select({ n: count() })
    .from(webhooks)
    .where(and(eq(webhooks.accountId, accountId), isNull(webhooks.deletedAt)));
  if ((row?.n ?? 0) >= MAX_WEBHOOKS_PER_ACCOUNT) {
    throw new AppError(
      "validation_failed",
      `An account can have at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks: delete one first`,
      { errors: [{ path: "url", code: "too_many_webhooks", message: `At most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks` }] },
    );
  }
}

/**
 * `within`: the workflows an API key is confined to. Such a key registers webhooks only for one of them — an
 * account-wide webhook would hear every other workflow's runs, which the key cannot see — and is answered 403 before
 * the workflow is looked up (the same answer whether another workflow exists or not).
 */
export async function createWebhook(accountId: string, body: z.output<typeof createWebhookBody>, within?: readonly string[]) {
  if (within) {
    if (!body.workflowId) {
      throw new AppError("forbidden", "This API key is confined to some workflows, so it can only register webhooks for one of them: pass workflowId.");
    }
    if (!within.includes(body.workflowId)) {
      throw new AppError("forbidden", `This API key is confined to some workflows and ${body.workflowId} is not one of them.`);
    }
  }
  const { url } = await assertSafeTargetUrl(body.url);
  if (body.workflowId) await assertOwnWorkflow(accountId, body.workflowId);
  await assertBelowCap(accountId);
  const events = webhookEvents.filter((e) => (body.events ?? webhookEvents).includes(e));
  const secret = newWebhookSecret();
  const db = await getDb();
  const [row] = await db
    .insert(webhooks)
    .values({
      id: newId("whk"),
      accountId,
      url: url.toString(),
      events,
      workflowId: body.workflowId ?? null,
      secretEncrypted: encryptSecret(secret),
    })
    .returning();
  return { ...webhookView(row!), secret };
}

/** `within`: a confined key lists only the webhooks of its workflows (account-wide ones hear other workflows). */
export async function listWebhooks(accountId: string, query: { limit: number; cursor?: string }, within?: readonly string[]) {
  const cursor = decodeCursor(query.cursor);
  const db = await getDb();
  const rows = await db
    .select()
    .from(webhooks)
    .where(
      and(
        eq(webhooks.accountId, accountId),
        isNull(webhooks.deletedAt),
        within ? inArray(webhooks.workflowId, within.length ? [...within] : [""]) : undefined,
        newestFirstAfter(cursor, webhooks.createdAt, webhooks.id),
      ),
    )
    .orderBy(desc(webhooks.createdAt), desc(webhooks.id))
    .limit(query.limit + 1);
  const result = page(rows, query.limit, (r) => ({ k: r.createdAt.toISOString(), id: r.id }));
  return { items: result.items.map(webhookView), nextCursor: result.nextCursor };
}

/**
 * The account's live webhook, or 404 (unknown, deleted and another account's answer alike; for a key confined to
 * `within`, a webhook of another workflow or an account-wide one too).
 */
export async function findOwnWebhook(accountId: string, webhookId: string, within?: readonly string[]): Promise<WebhookRow> {
  if (!looksLikeId("whk", webhookId)) throw notFound("Webhook");
  const db = await getDb();
  const [row] = await db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.id, webhookId), eq(webhooks.accountId, accountId), isNull(webhooks.deletedAt)));
  if (!row || (within && !(row.workflowId && within.includes(row.workflowId)))) throw notFound("Webhook");
  return row;
}

/** Soft delete (the delivery history stays in the database); deliveries still pending are given up. */
export async function deleteWebhook(accountId: string, webhookId: string, within?: readonly string[]): Promise<void> {
  const row = await findOwnWebhook(accountId, webhookId, within);
  const db = await getDb();
  const now = new Date();
  await db.transaction(async (tx) => {
    await tx.update(webhooks).set({ deletedAt: now }).where(eq(webhooks.id, row.id));
    await tx
      .update(webhookDeliveries)
      .set({ status: "failed", lastError: "Webhook deleted", nextAttemptAt: null, updatedAt: now })
      .where(and(eq(webhookDeliveries.webhookId, row.id), eq(webhookDeliveries.status, "pending")));
  });
}

export async function listDeliveries(accountId: string, webhookId: string, query: { limit: number; cursor?: string }, within?: readonly string[]) {
  const webhook = await findOwnWebhook(accountId, webhookId, within);
  const cursor = decodeCursor(query.cursor);
  const db = await getDb();
  const rows = await db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.webhookId, webhook.id), newestFirstAfter(cursor, webhookDeliveries.createdAt, webhookDeliveries.id)))
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(query.limit + 1);
  const result = page(rows, query.limit, (r) => ({ k: r.createdAt.toISOString(), id: r.id }));
  return {
    items: result.items.map((d) => ({
      id: d.id,
      event: d.event,
      runId: d.runId,
      status: d.status,
      attempts: d.attempts,
      lastStatusCode: d.lastStatusCode,
      lastError: d.lastError,
      nextAttemptAt: d.nextAttemptAt?.toISOString() ?? null,
      createdAt: d.createdAt.toISOString(),
      updatedAt: d.updatedAt.toISOString(),
    })),
    nextCursor: result.nextCursor,
  };
}
