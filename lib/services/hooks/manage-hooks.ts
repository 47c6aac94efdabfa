import "server-only";
import { and, desc, eq, inArray, sql } from "drizzle-orm";
import { getDb } from "@/db/client";
import { hookDeliveries, inboundHooks } from "@/db/schema";
import { getConfig } from "@/lib/config";
import { notFound } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { findOwnWorkflow } from "@/lib/services/workflows/get-workflow";
import { hashHookToken, newHookToken } from "./hook-token";

/** Deliveries shown per hook (the editor's "last deliveries"). */
export const DELIVERIES_SHOWN = 10;

export type CreatedHook = { id: string; url: string; createdAt: string };
export type HookDeliveryView = {
  status: number;
  runId: string | null;
  code: string | null;
  idempotencyKey: string | null;
  sizeBytes: number;
  receivedAt: string;
};
export type HookView = { id: string; workflowId: string; createdAt: string; lastDeliveries: HookDeliveryView[] };

/** POST /api/workflows/:workflowId/hooks: the URL carries the token, which is shown here and never again. */
export async function createHook(accountId: string, workflowId: string, baseUrl = getConfig().appUrl): Promise<CreatedHook> {
  const db = await getDb();
  await findOwnWorkflow(db, accountId, workflowId);
  const token = newHookToken();
  const [row] = await db
    .insert(inboundHooks)
    .values({ id: newId("hook"), workflowId, accountId, tokenHash: hashHookToken(token) })
    .returning({ id: inboundHooks.id, createdAt: inboundHooks.createdAt });
  return { id: row.id, url: `${baseUrl}/api/hooks/${token}`, createdAt: row.createdAt.toISOString() };
}

/** The workflow's hooks, newest first, without tokens (only their hashes exist), each with its last deliveries. */
export async function listHooks(accountId: string, workflowId: string): Promise<{ items: HookView[] }> {
  const db = await getDb();
  await findOwnWorkflow(db, accountId, workflowId);
  const hooks = await db
    .select({ id: inboundHooks.id, workflowId: inboundHooks.workflowId, createdAt: inboundHooks.createdAt })
    .from(inboundHooks)
    .where(and(eq(inboundHooks.workflowId, workflowId), eq(inboundHooks.accountId, accountId)))
    .orderBy(desc(inboundHooks.createdAt), desc(inboundHooks.id));
  const deliveries =
    hooks.length === 0
      ? []
      : await db
          .select()
          .from(hookDeliveries)
          .where(
            and(
              inArray(hookDeliveries.hookId, hooks.map((h) => h.id)),
              sql`${hookDeliveries.id} in (select d.id from hook_deliveries d where d.hook_id = ${hookDeliveries.hookId} order by d.id desc limit ${DELIVERIES_SHOWN})`,
            ),
          )
          .orderBy(desc(hookDeliveries.id));
  return {
    items: hooks.map((hook) => ({
      id: hook.id,
      workflowId: hook.workflowId,
      createdAt: hook.createdAt.toISOString(),
      lastDeliveries: deliveries.filter((d) => d.hookId === hook.id).map(toDeliveryView),
    })),
  };
}

function toDeliveryView(row: typeof hookDeliveries.$inferSelect): HookDeliveryView {
  return {
    status: row.status,
    runId: row.runId,
    code: row.code,
    idempotencyKey: row.idempotencyKey,
    sizeBytes: row.sizeBytes,
    receivedAt: row.receivedAt.toISOString(),
  };
}

/** DELETE …/hooks/:hookId: the row (and its token hash) is gone, so its URL answers 404 at once. */
export async function deleteHook(accountId: string, workflowId: string, hookId: string): Promise<void> {
  const db = await getDb();
  await findOwnWorkflow(db, accountId, workflowId);
  const deleted = await db
    .delete(inboundHooks)
    .where(and(eq(inboundHooks.id, hookId), eq(inboundHooks.workflowId, workflowId), eq(inboundHooks.accountId, accountId)))
    .returning({ id: inboundHooks.id });
  if (deleted.length === 0) throw notFound("Hook");
}
