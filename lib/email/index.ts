import "server-only";
import { getConfig, type Config } from "@/lib/config";
import { instrumentSender } from "@/lib/observability/send";
import { createMailboxSender } from "./mailbox-sender";
import { createResendSender } from "./resend-sender";
import { createSmtpSender, parseSmtpUrl } from "./smtp-sender";
import type { EmailSender } from "./types";

export * from "./types";

let made: { config: Config; sender: EmailSender } | undefined;

/**
 * The deployment's transport: Resend when RESEND_API_KEY is set (RESEND_BASE_URL points it elsewhere), else SMTP when
 * SMTP_URL is set, otherwise the local mailbox. Sign-up codes and account emails always go through it; OUTPUT nodes
 * through it only without a sender of their account (lib/services/senders/resolve-sender.ts). One sender per
 * configuration (a new one after resetConfig): an OUTPUT node asks several times per batch, and a Resend client with
 * its key's hash cost ~0.1 ms of CPU per tiny run when made each time.
 */
export function getEmailSender(): EmailSender {
  const config = getConfig();
  if (made?.config !== config) {
    const previous = made?.sender as { close?: () => void } | undefined;
    previous?.close?.();
    made = { config, sender: instrumentSender(makeSender(config)) };
  }
  return made.sender;
}

function makeSender(config: Config): EmailSender {
  if (config.emailTransport === "resend" && config.resend.apiKey) {
    return createResendSender({ apiKey: config.resend.apiKey, baseUrl: config.resend.baseUrl, from: config.emailFrom });
  }
  if (config.emailTransport === "smtp" && config.smtpUrl) return createSmtpSender({ ...parseSmtpUrl(config.smtpUrl), from: config.emailFrom });
  const mailbox = createMailboxSender();
  // MAILBOX_RATE_PER_SECOND paces the local mailbox through the same limiter (to watch progress in a demo or a test).
  return config.mailboxRatePerSecond ? { ...mailbox, pacingKey: "mailbox" } : mailbox;
}

export function isMailboxActive(): boolean {
  return getConfig().emailTransport === "mailbox";
}
