import "server-only";
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { senders } from "@/db/schema";
import { getConfig } from "@/lib/config";
import { decryptSecret } from "@/lib/crypto";
import { getEmailSender } from "@/lib/email";
import { createResendSender } from "@/lib/email/resend-sender";
import { createSesSender, readSesQuota } from "@/lib/email/ses-sender";
import { createSmtpSender } from "@/lib/email/smtp-sender";
import type { EmailSender } from "@/lib/email/types";
import { instrumentSender } from "@/lib/observability/send";
import type { ResolvedSender } from "@/lib/nodes/ports";
import { safeSmtpAddresses } from "./sender-settings";
import type { SenderRow } from "./sender-view";

/** Default pace of a sender of each kind without its own `ratePerSecond` (SES: the account's MaxSendRate). */
export const DEFAULT_RATE = { resend: 5, smtp: 10, ses: 1 } as const;

type Made = { version: string; resolved: Promise<ResolvedSender> };
/**
 * One transport per sender version (id and last change), kept while the process lives: an SMTP sender's pool of
 * connections is reused by every run, and SES's GetAccount is read once. A changed sender gets a new one (its old
 * SMTP pool closed).
 */
const made = new Map<string, Made>();

/**
 * The sender an OUTPUT node sends through: its `senderId`, else the account's default sender (the one recorded on the
 * run when it was first claimed, `fixedDefault`, when given), else the deployment's transport. A sender that is not the
 * account's (deleted since) is refused with a sentence naming it.
 */
export async function resolveSender(db: Db, accountId: string, senderId?: string, fixedDefault?: string | null): Promise<ResolvedSender> {
  if (senderId === undefined && fixedDefault !== undefined) {
    if (fixedDefault === null) return deploymentSender();
    senderId = fixedDefault;
  }
  const [row] = await db.select().from(senders).where(
    senderId ? and(eq(senders.id, senderId), eq(senders.accountId, accountId)) : and(eq(senders.accountId, accountId), eq(senders.isDefault, true)),
  );
  if (!row) {
    if (senderId) throw new SenderMissing(senderId);
    return deploymentSender();
  }
  return senderFromRow(row);
}

export class SenderMissing extends Error {
  constructor(readonly senderId: string) {
    super(`The sender ${senderId} does not exist any more: choose another sender in the OUTPUT node.`);
    this.name = "SenderMissing";
  }
}

/** The deployment's transport (RESEND_API_KEY, SMTP_URL or the local mailbox) at its configured pace. */
export function deploymentSender(): ResolvedSender {
  const sender = getEmailSender();
  const config = getConfig();
  const ratePerSecond = sender.name === "mailbox" ? (config.mailboxRatePerSecond ?? config.emailRatePerSecond) : config.emailRatePerSecond;
  return { sender, ratePerSecond, label: sender.name === "resend" ? "Resend" : sender.name === "smtp" ? "The SMTP server" : "The email provider" };
}

export function senderFromRow(row: SenderRow): Promise<ResolvedSender> {
  const version = `${row.updatedAt.getTime()}`;
  const known = made.get(row.id);
  if (known?.version === version) return known.resolved;
  if (known) void known.resolved.then((r) => (r.sender as { close?: () => void }).close?.()).catch(() => undefined);
  const resolved = build(row);
  made.set(row.id, { version, resolved });
  resolved.catch(() => made.get(row.id)?.resolved === resolved && made.delete(row.id));
  return resolved;
}

/** An account's own sender, its provider calls observed like the deployment's (metrics and `send.batch` spans). */
async function build(row: SenderRow): Promise<ResolvedSender> {
  const resolved = await buildUnobserved(row);
  return { ...resolved, sender: instrumentSender(resolved.sender) };
}

async function buildUnobserved(row: SenderRow): Promise<ResolvedSender> {
  const secret = row.secretEncrypted ? decryptSecret(row.secretEncrypted) : undefined;
  const replyTo = row.replyTo ?? undefined;
  const base = { senderId: row.id, dailyQuota: row.dailyQuota ?? undefined };
  if (row.kind === "resend") {
    const resend = createResendSender({ apiKey: secret ?? "", baseUrl: getConfig().resend.baseUrl, from: row.fromAddress });
    return { ...base, sender: withReplyTo(resend, replyTo), ratePerSecond: row.ratePerSecond ?? DEFAULT_RATE.resend, label: "Resend" };
  }
  if (row.kind === "smtp") {
    const smtp = row.settings.smtp!;
    // Checked again here, not only when the sender was saved: the name may resolve elsewhere now (DNS rebinding).
    const pinnedAddress = (await safeSmtpAddresses(smtp.host))[0];
    const sender = createSmtpSender({ ...smtp, pinnedAddress, password: secret, from: row.fromAddress, replyTo });
    return { ...base, sender, ratePerSecond: row.ratePerSecond ?? DEFAULT_RATE.smtp, label: "The SMTP server" };
  }
  const ses = row.settings.ses!;
  const options = { ...ses, secretAccessKey: secret ?? "", endpoint: getConfig().sesEndpoint };
  const sender = createSesSender({ ...options, from: row.fromAddress, replyTo });
  // The account's own limits, unless the sender sets them: read once per sender version (a refusal leaves the defaults).
  const quota = row.ratePerSecond && row.dailyQuota ? {} : await readSesQuota(options).catch(() => ({}) as { maxSendRate?: number; max24HourSend?: number });
  return {
    ...base,
    sender,
    ratePerSecond: row.ratePerSecond ?? (quota.maxSendRate && quota.maxSendRate > 0 ? quota.maxSendRate : DEFAULT_RATE.ses),
    dailyQuota: row.dailyQuota ?? (quota.max24HourSend && quota.max24HourSend > 0 ? quota.max24HourSend : undefined),
    label: "Amazon SES",
  };
}

/** Resend without touching its transport: the sender's Reply-To goes as a header of each email that has none. */
function withReplyTo(sender: EmailSender, replyTo?: string): EmailSender {
  const add = (e: Parameters<EmailSender["send"]>[0]) => {
    const to = e.replyTo ?? replyTo;
    return to ? { ...e, headers: { ...e.headers, "Reply-To": to } } : e;
  };
  return {
    ...sender,
    send: (email, options) => sender.send(add(email), options),
    sendBatch: (emails, key, options) => sender.sendBatch(emails.map(add), key, options),
    sendBatchDetailed: sender.sendBatchDetailed ? (emails, key, options) => sender.sendBatchDetailed!(emails.map(add), key, options) : undefined,
  };
}

/** Notes a sender's last refusal (null after a success): shown in its settings. */
export async function noteSenderError(db: Db, senderId: string, error: string | null): Promise<void> {
  await db.execute(sql`update senders set last_error = ${error} where id = ${senderId} and last_error is distinct from ${error}`);
}
