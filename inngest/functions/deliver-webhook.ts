import { attemptDelivery, MAX_DELIVERY_ATTEMPTS } from "@/lib/webhooks/deliver-webhook";
import { webhookDeliverEvent } from "@/lib/webhooks/delivery-event";
import { getInngest } from "../client";

/**
 * One delivery with its retries: each attempt is a durable step, and the backoff between attempts a durable
 * sleep, so a deploy in the middle neither repeats a finished attempt nor forgets the ones left. Postgres
 * records every attempt (the deliveries list reads it). Inngest's own retries cover only our infrastructure
 * failing (the database), not the receiver's answers, which attemptDelivery records instead of throwing.
 */
export const deliverWebhookFunction = getInngest().createFunction(
  { id: "deliver-webhook", triggers: [webhookDeliverEvent], retries: 3 },
  async ({ event, step }) => {
    const { deliveryId } = event.data as { deliveryId: string };
    for (let attempt = 1; attempt <= MAX_DELIVERY_ATTEMPTS; attempt++) {
      const outcome = await step.run(`attempt-${attempt}`, () => attemptDelivery(deliveryId));
      if (outcome.status !== "pending") return { deliveryId, ...outcome };
      await step.sleep(`backoff-${attempt}`, outcome.retryInMs);
    }
    return { deliveryId, status: "failed", attempts: MAX_DELIVERY_ATTEMPTS };
  },
);
