import { getDb } from "@/db/client";
import { attemptDelivery, MAX_DELIVERY_ATTEMPTS } from "@/lib/webhooks/deliver-webhook";
import { webhookDeliverEvent } from "@/lib/webhooks/delivery-event";
import { stalledDeliveries } from "@/lib/webhooks/stalled-deliveries";
import { getInngest } from "@/lib/events/inngest";

/**
 * One delivery with its retries: each attempt is a durable step, and the backoff between attempts a durable
 * sleep, so a deploy in the middle neither repeats a finished attempt nor forgets the ones left. Postgres
 * records every attempt (the deliveries list reads it). Inngest's own retries cover only our infrastructure
 * failing (the database), not the receiver's answers, which attemptDelivery records instead of throwing.
 *
 * Every 5 minutes the same function also re-sends the event of deliveries whose event was lost (the send
 * after a finished run failed, or a function run gave up): Postgres, not the event, is the source of truth.
 */
export const deliverWebhookFunction = getInngest().createFunction(
  { id: "deliver-webhook", triggers: [webhookDeliverEvent, { cron: "*/5 * * * *" }], retries: 3 },
  async ({ event, step }) => {
    if (event.name !== webhookDeliverEvent.name) {
      const stalled = await step.run("find-stalled-deliveries", async () => stalledDeliveries(await getDb()));
      if (stalled.length > 0) {
        await step.sendEvent(
          "redeliver",
          stalled.map((d) => webhookDeliverEvent.create({ deliveryId: d.id }, { id: `webhook-delivery-${d.id}-${d.attempts}` })),
        );
      }
      return { redelivered: stalled.length };
    }
    const { deliveryId } = event.data as { deliveryId: string };
    for (let attempt = 1; attempt <= MAX_DELIVERY_ATTEMPTS; attempt++) {
      const outcome = await step.run(`attempt-${attempt}`, () => attemptDelivery(deliveryId));
      if (outcome.status !== "pending") return { deliveryId, ...outcome };
      await step.sleep(`backoff-${attempt}`, outcome.retryInMs);
    }
    return { deliveryId, status: "failed", attempts: MAX_DELIVERY_ATTEMPTS };
  },
);
