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
  return createMailboxSender();
}

export function isMailboxActive(): boolean {
  return getConfig().emailTransport === "mailbox";
}
