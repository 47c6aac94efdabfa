import { eventType } from "inngest";
import { z } from "zod";

/** `flowmail/webhook.deliver`: one webhook delivery to make (with its retries) under Inngest. */
export const webhookDeliverEvent = eventType("flowmail/webhook.deliver", {
  schema: z.object({ deliveryId: z.string() }),
});
