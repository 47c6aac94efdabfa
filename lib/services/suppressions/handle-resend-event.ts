import "server-only";
import { sql } from "drizzle-orm";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { execRows, getDb } from "@/db/client";
import { getConfig } from "@/lib/config";
import { AppError, notFound } from "@/lib/errors";
import { log } from "@/lib/log";
import { addSuppressions } from "./add-suppressions";
import { normalizeEmail } from "@/lib/schemas/email-address";

type ResendEvent = {
  type?: string;
  data?: { email_id?: string; to?: string[] | string; bounce?: { type?: string } };
};

/**
 * Resend's event webhook (Svix-signed: `svix-id`, `svix-timestamp`, `svix-signature`, the same scheme as Standard
 * Webhooks). A permanent bounce suppresses the address as `bounced`, a complaint as `complained`, for the account
 * whose email it was — found through the provider message id the send ledger stored. Every other event (delivered,
 * opened, a transient bounce, an id we never sent) is acknowledged and ignored, so Resend does not retry it.
 */
export async function handleResendEvent(rawBody: string, headers: Headers): Promise<{ handled: boolean }> {
  const secret = getConfig().resendWebhookSecret;
  if (!secret) throw notFound("Resource");
  const header = (name: string) => headers.get(`svix-${name}`) ?? headers.get(`webhook-${name}`) ?? "";
  let event: ResendEvent;
  try {
    event = new Webhook(secret).verify(rawBody, {
      "webhook-id": header("id"),
      "webhook-timestamp": header("timestamp"),
      "webhook-signature": header("signature"),
    }) as ResendEvent;
  } catch (error) {
    if (error instanceof WebhookVerificationError || error instanceof Error) {
      throw new AppError("invalid_token", "The webhook signature is missing or does not match RESEND_WEBHOOK_SECRET.");
    }
    throw error;
  }
  const reason = event.type === "email.complained" ? "complained"
    : event.type === "email.bounced" && (event.data?.bounce?.type ?? "Permanent").toLowerCase() === "permanent" ? "bounced"
    : null;
  const messageId = event.data?.email_id;
  if (!reason || typeof messageId !== "string") return { handled: false };
  const db = await getDb();
  const [row] = await execRows<{ account_id: string; to: string }>(
    db,
    sql`select e.account_id, e."to" from email_provider_ids p join email_sends e on e.id = p.email_id
        where p.provider_message_id = ${messageId}`,
  );
  if (!row) return { handled: false };
  await addSuppressions(row.account_id, [normalizeEmail(row.to)], reason, db);
  log.info("address suppressed by a Resend event", { accountId: row.account_id, reason });
  return { handled: true };
}
