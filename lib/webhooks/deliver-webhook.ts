import "server-only";
import { and, eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { getDb } from "@/db/client";
import { runs, webhookDeliveries, webhooks } from "@/db/schema";
import { decryptSecret } from "@/lib/crypto";
import { AppError } from "@/lib/errors";
import { log } from "@/lib/log";
import { sanitizeProviderMessage } from "@/lib/net/provider-message";
import { contextFromTraceparent, outboundTraceparent } from "@/lib/observability/trace-context";
import { withSpan } from "@/lib/observability/tracing";
import { safeFetch, SafeFetchError } from "@/lib/net/ssrf";

export const MAX_DELIVERY_ATTEMPTS = 5;

export type DeliveryOptions = {
  /** Wait after failed attempt n (index n-1) before attempt n+1; MAX_DELIVERY_ATTEMPTS - 1 entries are used. */
  retryDelaysMs: readonly number[];
  timeoutMs: number;
  maxResponseBytes: number;
};

/** 5 s, 30 s, 2 min, 10 min between the five attempts: a receiver may be down for about 12 minutes. */
export const DEFAULT_DELIVERY_OPTIONS: DeliveryOptions = {
  retryDelaysMs: [5_000, 30_000, 120_000, 600_000],
  timeoutMs: 10_000,
  maxResponseBytes: 64 * 1024,
};

export type DeliveryOutcome =
  | { status: "succeeded" | "failed"; attempts: number }
  | { status: "pending"; attempts: number; retryInMs: number };

type AttemptResult = { ok: boolean; statusCode: number | null; error: string | null };

export const WEBHOOK_USER_AGENT = "Flowmail-Webhooks/1.0";

/**
 * Makes one attempt at a delivery and records it. Never throws for the receiver's failures (they are the
 * outcome); a delivery that is no longer pending is left as it is, so a repeated call is harmless.
 */
export async function attemptDelivery(
  deliveryId: string,
  options: DeliveryOptions = DEFAULT_DELIVERY_OPTIONS,
): Promise<DeliveryOutcome> {
  const db = await getDb();
  const [row] = await db
    .select({ delivery: webhookDeliveries, webhook: webhooks, traceparent: runs.traceparent })
    .from(webhookDeliveries)
    .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
    .leftJoin(runs, eq(runs.id, webhookDeliveries.runId))
    .where(eq(webhookDeliveries.id, deliveryId));
  if (!row) return { status: "failed", attempts: 0 };
  const { delivery, webhook } = row;
  if (delivery.status !== "pending") return { status: delivery.status, attempts: delivery.attempts };
  if (webhook.deletedAt) return record(delivery, { ok: false, statusCode: null, error: "Webhook deleted" }, options, true);
  // The delivery belongs to its run's trace: a `webhook.deliver` span there, and the receiver gets its `traceparent`.
  const result = await withSpan("webhook.deliver", { "flowmail.webhook.event": delivery.event }, () => send(delivery, webhook, options, row.traceparent), contextFromTraceparent(row.traceparent));
  return record(delivery, result, options, false);
}

async function send(
  delivery: typeof webhookDeliveries.$inferSelect,
  webhook: typeof webhooks.$inferSelect,
  options: DeliveryOptions,
  runTraceparent: string | null,
): Promise<AttemptResult> {
  const body = JSON.stringify(delivery.payload);
  const traceparent = outboundTraceparent(runTraceparent);
  const signer = new Webhook(decryptSecret(webhook.secretEncrypted));
  const now = new Date();
  try {
    const res = await safeFetch(webhook.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": WEBHOOK_USER_AGENT,
        "webhook-id": delivery.id,
        "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
        "webhook-signature": signer.sign(delivery.id, now, body),
        ...(traceparent ? { traceparent } : {}),
      },
      body,
      timeoutMs: options.timeoutMs,
      maxResponseBytes: options.maxResponseBytes,
    });
    if (res.status >= 200 && res.status < 300) return { ok: true, statusCode: res.status, error: null };
    return { ok: false, statusCode: res.status, error: describeFailure(res.status, res.body, res.headers.location) };
  } catch (error) {
    if (error instanceof SafeFetchError || error instanceof AppError) return { ok: false, statusCode: null, error: sanitizeProviderMessage(error.message) };
    log.error("webhook delivery crashed", { deliveryId: delivery.id, error });
    return { ok: false, statusCode: null, error: "Delivery failed unexpectedly" };
  }
}

/** The receiver's answer as people see it: its status and a bounded, cleaned snippet (no paths, SQL or markup). */
function describeFailure(status: number, body: string, location: string | undefined): string {
  if (status >= 300 && status < 400) return `HTTP ${status}: redirects are not followed${location ? ` (to ${location.slice(0, 200)})` : ""}`;
  return body.trim() ? `HTTP ${status}: ${sanitizeProviderMessage(body, 200)}` : `HTTP ${status}`;
}

async function record(
  delivery: typeof webhookDeliveries.$inferSelect,
  result: AttemptResult,
  options: DeliveryOptions,
  giveUp: boolean,
): Promise<DeliveryOutcome> {
  const attempts = delivery.attempts + 1;
  const now = new Date();
  const retryInMs = options.retryDelaysMs[Math.min(attempts - 1, options.retryDelaysMs.length - 1)] ?? 0;
  const outcome: DeliveryOutcome = result.ok
    ? { status: "succeeded", attempts }
    : giveUp || attempts >= MAX_DELIVERY_ATTEMPTS
      ? { status: "failed", attempts }
      : { status: "pending", attempts, retryInMs };
  const db = await getDb();
  // Guarded by the attempt count read before sending: two workers racing on one delivery record it once.
  await db
    .update(webhookDeliveries)
    .set({
      status: outcome.status,
      attempts,
      lastStatusCode: result.statusCode,
      lastError: result.error,
      nextAttemptAt: outcome.status === "pending" ? new Date(now.getTime() + retryInMs) : null,
      updatedAt: now,
    })
    .where(
      and(
        eq(webhookDeliveries.id, delivery.id),
        eq(webhookDeliveries.status, "pending"),
        eq(webhookDeliveries.attempts, delivery.attempts),
      ),
    );
  return outcome;
}
