import "server-only";
import { getConfig } from "@/lib/config";
import { createMailboxSender } from "./mailbox-sender";
import { createResendSender } from "./resend-sender";
import type { EmailSender } from "./types";

export * from "./types";

/** Resend when RESEND_API_KEY is set (RESEND_BASE_URL points it elsewhere), otherwise the local mailbox. */
export function getEmailSender(): EmailSender {
  const config = getConfig();
  if (config.emailTransport === "resend" && config.resend.apiKey) {
    return createResendSender({ apiKey: config.resend.apiKey, baseUrl: config.resend.baseUrl, from: config.emailFrom });
  }
  const mailbox = createMailboxSender();
  // MAILBOX_RATE_PER_SECOND paces the local mailbox through the same limiter (to watch progress in a demo or a test).
  return config.mailboxRatePerSecond ? { ...mailbox, pacingKey: "mailbox" } : mailbox;
}

export function isMailboxActive(): boolean {
  return getConfig().emailTransport === "mailbox";
}
