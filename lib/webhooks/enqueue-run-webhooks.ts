import "server-only";
import { and, eq, inArray, isNull } from "drizzle-orm";
import { getDb } from "@/db/client";
import { webhookDeliveries, webhooks } from "@/db/schema";
import { getConfig } from "@/lib/config";
import { newId } from "@/lib/ids";
import type { WebhookEvent } from "@/lib/schemas/webhooks";
import { webhookDeliverEvent } from "./delivery-event";
import { pokeWebhookDeliveryLoop } from "./delivery-loop";

export type FinishedRun = {
  runId: string;
  workflowId: string;
  accountId: string;
  status: "SUCCESS" | "FAILED";
  result: { emailsSent: number; filteredOut: number; totalRows: number } | null;
  error: string | null;
};

/**
 * Seam between the run engine and webhooks: called once when a run reaches SUCCESS or FAILED.
 * Records one delivery per matching webhook (at most one per webhook, run and event, so a repeated call adds
 * nothing) and schedules the pending ones: an Inngest event each, or a poke of the embedded delivery loop.
 */
export async function enqueueRunWebhooks(run: FinishedRun): Promise<void> {
  const event: WebhookEvent = run.status === "SUCCESS" ? "run.succeeded" : "run.failed";
  const db = await getDb();
  const candidates = await db
    .select({ id: webhooks.id, events: webhooks.events, workflowId: webhooks.workflowId })
    .from(webhooks)
    .where(and(eq(webhooks.accountId, run.accountId), isNull(webhooks.deletedAt)));
  const matching = candidates.filter(
    (w) => w.events.includes(event) && (w.workflowId === null || w.workflowId === run.workflowId),
  );
  if (matching.length === 0) return;
  const now = new Date();
  const payload = {
    type: event,
    timestamp: now.toISOString(),
    data: { runId: run.runId, workflowId: run.workflowId, status: run.status, result: run.result, error: run.error },
  };
  await db
    .insert(webhookDeliveries)
    .values(matching.map((w) => ({ id: newId("dlv"), webhookId: w.id, event, runId: run.runId, payload, nextAttemptAt: now })))
    .onConflictDoNothing({ target: [webhookDeliveries.webhookId, webhookDeliveries.runId, webhookDeliveries.event] });
  const pending = await db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.runId, run.runId),
        eq(webhookDeliveries.event, event),
        eq(webhookDeliveries.status, "pending"),
        inArray(webhookDeliveries.webhookId, matching.map((w) => w.id)),
      ),
    );
  await scheduleDeliveries(pending.map((d) => d.id));
}

async function scheduleDeliveries(deliveryIds: string[]): Promise<void> {
  if (deliveryIds.length === 0) return;
  if (!getConfig().inngest.enabled) {
    pokeWebhookDeliveryLoop();
    return;
  }
  const { getInngest } = await import("@/lib/events/inngest");
  // The event id makes Inngest drop a second event for the same delivery (a repeated call).
  await getInngest().send(
    deliveryIds.map((deliveryId) => webhookDeliverEvent.create({ deliveryId }, { id: `webhook-delivery-${deliveryId}` })),
  );
}
