import "server-only";
import type { SenderKind, SenderSettings } from "@/db/schema";
import { encryptSecret } from "@/lib/crypto";
import { AppError } from "@/lib/errors";
import { assertSafeTargetUrl } from "@/lib/net/ssrf";
import type { CreateSenderInput } from "@/lib/schemas/senders";
import type { SenderRow } from "./sender-view";

type KindInput = Pick<CreateSenderInput, "resend" | "smtp" | "ses">;

/**
 * The stored columns of a kind's settings: what may be shown in `settings`, the secret encrypted (AES-256-GCM, as the
 * AI key) with its last 4 characters. A secret left out (an SMTP password, an SES secret key on PATCH) keeps the
 * stored one of the same kind (`previous`).
 */
export async function settingsColumns(kind: SenderKind, input: KindInput, previous?: SenderRow) {
  const same = previous?.kind === kind ? previous : undefined;
  const kept = { secretEncrypted: same?.secretEncrypted ?? null, secretLast4: same?.secretLast4 ?? null };
  const secret = (value: string | undefined) =>
    value === undefined || value === "" ? kept : { secretEncrypted: encryptSecret(value), secretLast4: value.slice(-4) };
  if (kind === "resend" && input.resend) return { settings: {} as SenderSettings, ...secret(input.resend.apiKey) };
  if (kind === "smtp" && input.smtp) {
    await assertSafeHost(input.smtp.host);
    const { password, ...shown } = input.smtp;
    return { settings: { smtp: shown } as SenderSettings, ...secret(password) };
  }
  if (kind === "ses" && input.ses) {
    const { secretAccessKey, ...shown } = input.ses;
    // The SNS topic confirmed for this sender stays pinned while its region does (new keys, same account's topic).
    const topic = same?.settings?.snsTopicArn && same.settings.ses?.region === shown.region ? { snsTopicArn: same.settings.snsTopicArn } : {};
    const columns = { settings: { ses: shown, ...topic } as SenderSettings, ...secret(secretAccessKey) };
    if (!columns.secretEncrypted) throw invalid("ses.secretAccessKey", "Required");
    return columns;
  }
  return undefined;
}

export const invalid = (path: string, message: string) =>
  new AppError("validation_failed", message, { errors: [{ path, code: "invalid", message }] });

/**
 * The server will connect to this SMTP host for the account: the shared SSRF guard decides on its addresses (private
 * and loopback ones only where ALLOW_PRIVATE_NETWORK_TARGETS allows them), reported on `smtp.host`.
 */
async function assertSafeHost(host: string): Promise<void> {
  try {
    await safeSmtpAddresses(host);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    throw new AppError("validation_failed", error.message, { errors: [{ path: "smtp.host", code: "unsafe_host", message: error.message }] });
  }
}

/** The addresses an SMTP host resolves to now, each allowed by the SSRF guard (else its AppError). */
export async function safeSmtpAddresses(host: string): Promise<string[]> {
  const bare = host.replace(/^\[|\]$/g, "");
  return (await assertSafeTargetUrl(bare.includes(":") ? `https://[${bare}]/` : `https://${bare}/`)).addresses;
}
