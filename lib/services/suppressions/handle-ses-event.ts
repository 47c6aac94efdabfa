import "server-only";
import { eq, sql } from "drizzle-orm";
import { getDb } from "@/db/client";
import { senders } from "@/db/schema";
import { getFromSns, verifySnsMessage, type SnsMessage } from "@/lib/email/sns-verify";
import { AppError, notFound } from "@/lib/errors";
import { looksLikeId } from "@/lib/ids";
import { log } from "@/lib/log";
import { EMAIL_ADDRESS, normalizeEmail } from "@/lib/schemas/email-address";
import { addSuppressions } from "./add-suppressions";

type SesEvent = {
  notificationType?: string;
  eventType?: string;
  bounce?: { bounceType?: string; bouncedRecipients?: { emailAddress?: string }[] };
  complaint?: { complainedRecipients?: { emailAddress?: string }[] };
};

/**
 * POST /api/integrations/ses/events/:senderId — an SES sender's bounces and complaints through an SNS topic. The SNS
 * signature is checked first (401 when it does not verify); an unknown id or one that is not an SES sender answers 404.
 * A SubscriptionConfirmation is confirmed by fetching its SubscribeURL (SNS's own address only). A notification of a
 * permanent bounce suppresses its recipients as `bounced`, a complaint as `complained`, for the sender's account;
 * anything else (deliveries, transient bounces) is acknowledged and ignored, so SNS does not retry it.
 */
export async function handleSesEvent(senderId: string, rawBody: string): Promise<{ handled: boolean }> {
  const sender = looksLikeId("snd", senderId)
    ? (await (await getDb()).select({ accountId: senders.accountId, kind: senders.kind, settings: senders.settings }).from(senders).where(eq(senders.id, senderId)))[0]
    : undefined;
  if (!sender || sender.kind !== "ses") throw notFound("Sender");
  let message: SnsMessage;
  try {
    message = JSON.parse(rawBody) as SnsMessage;
  } catch {
    throw new AppError("invalid_token", "The body is not a signed Amazon SNS message.");
  }
  if (!message || typeof message !== "object" || !(await verifySnsMessage(message))) {
    throw new AppError("invalid_token", "The Amazon SNS signature is missing or does not verify.");
  }
  // A valid signature proves only that Amazon SNS sent the message, from anyone's topic: the sender takes events from
  // one topic, the first whose subscription it confirmed, in the sender's own region. Another topic answers 403.
  const topic = typeof message.TopicArn === "string" ? message.TopicArn : "";
  const pinned = sender.settings?.snsTopicArn;
  const region = sender.settings?.ses?.region;
  if (pinned ? topic !== pinned : !topic.startsWith(`arn:aws:sns:${region}:`) || message.Type !== "SubscriptionConfirmation") {
    throw new AppError("forbidden", pinned
      ? "This SNS topic is not the one this sender's events come from."
      : `Confirm the subscription of an SNS topic in ${region} first: this sender takes events from that topic only.`);
  }
  if (message.Type === "SubscriptionConfirmation" && message.SubscribeURL) {
    if (!pinned) {
      await (await getDb()).execute(sql`update senders set settings = settings || jsonb_build_object('snsTopicArn', ${topic}::text)
        where id = ${senderId} and settings->>'snsTopicArn' is null`);
    }
    await getFromSns(message.SubscribeURL).catch((error: unknown) => {
      throw new AppError("service_unavailable", `The SNS subscription could not be confirmed: ${error instanceof Error ? error.message : "no answer"}.`);
    });
    log.info("SNS subscription confirmed for an SES sender", { senderId, topicArn: message.TopicArn });
    return { handled: true };
  }
  if (message.Type !== "Notification") return { handled: false };
  let event: SesEvent;
  try {
    event = JSON.parse(message.Message) as SesEvent;
  } catch {
    return { handled: false };
  }
  const type = event.notificationType ?? event.eventType;
  const list = type === "Complaint"
    ? event.complaint?.complainedRecipients
    : type === "Bounce" && event.bounce?.bounceType === "Permanent" ? event.bounce.bouncedRecipients : undefined;
  const emails = (list ?? []).flatMap((r) => {
    const address = typeof r?.emailAddress === "string" ? normalizeEmail(r.emailAddress.replace(/^.*<([^>]+)>.*$/, "$1")) : "";
    return EMAIL_ADDRESS.test(address) ? [address] : [];
  });
  if (emails.length === 0) return { handled: false };
  const reason = type === "Complaint" ? "complained" : "bounced";
  await addSuppressions(sender.accountId, emails.slice(0, 1000), reason);
  log.info("addresses suppressed by an SES event", { accountId: sender.accountId, reason, count: emails.length });
  return { handled: true };
}
