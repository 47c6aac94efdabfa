import "server-only";
import { createHash } from "node:crypto";
import { Resend } from "resend";
import { providerErrorText } from "@/lib/net/provider-message";
import { EmailSendError, type BatchResult, type EmailSender, type OutgoingEmail, type RateLimitInfo, type SendResult } from "./types";

export const RESEND_BATCH_LIMIT = 100;

type ResendError = { message?: string; statusCode?: number | null; name?: string };
type ResendResult<T> = { data: T | null; error: ResendError | null; headers?: Record<string, string> | null };

/**
 * The Resend transport. The SDK never throws: it answers `{ data, error }`, where `error.statusCode` is the
 * HTTP status (null for a network failure), so errors are turned into EmailSendError here.
 */
export function createResendSender(options: { apiKey: string; baseUrl?: string; from: string }): EmailSender {
  const resend = new Resend(options.apiKey, options.baseUrl ? { baseUrl: options.baseUrl } : undefined);
  const toPayload = (email: OutgoingEmail) => ({
    from: options.from,
    to: email.to,
    subject: email.subject,
    // Resend needs a text or an html body; send both when both exist.
    html: email.html,
    text: email.text ?? (email.html === undefined ? "" : undefined),
    ...(email.headers ? { headers: email.headers } : {}),
  }) as { from: string; to: string; subject: string; text: string; html?: string; headers?: Record<string, string> };
  const sendBatchDetailed = async (emails: OutgoingEmail[], batchIdempotencyKey?: string): Promise<BatchResult> => {
    if (emails.length === 0) return { results: [] };
    if (emails.length > RESEND_BATCH_LIMIT) {
      throw new EmailSendError(`A batch holds at most ${RESEND_BATCH_LIMIT} emails (got ${emails.length})`, false);
    }
    const result = (await resend.batch.send(emails.map(toPayload), { idempotencyKey: batchIdempotencyKey })) as ResendResult<{
      data: SendResult[];
    }>;
    const ids = unwrap(result).data;
    if (!Array.isArray(ids) || ids.length !== emails.length) {
      throw new EmailSendError("Resend answered the batch with an unexpected number of ids", false);
    }
    return { results: ids.map((row) => ({ id: row.id })), rateLimit: rateLimitInfo(result.headers ?? undefined) };
  };
  return {
    name: "resend",
    // The limit belongs to the Resend team behind the key: a hash names it without storing the key.
    pacingKey: `resend:${createHash("sha256").update(options.apiKey).digest("base64url").slice(0, 22)}`,
    async send(email) {
      const result = (await resend.emails.send(toPayload(email), { idempotencyKey: email.idempotencyKey })) as ResendResult<SendResult>;
      return { id: unwrap(result).id };
    },
    sendBatch: async (emails, key) => (await sendBatchDetailed(emails, key)).results,
    sendBatchDetailed,
  };
}

function unwrap<T>(result: ResendResult<T>): T {
  if (result.error) throw toSendError(result.error, result.headers ?? undefined);
  if (!result.data) throw new EmailSendError("Resend answered without data", true);
  return result.data;
}

const number = (value: string | undefined) => {
  if (value === undefined || value.trim() === "") return undefined;
  const n = Number(value);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
};

/** Resend's IETF-draft headers (`ratelimit-limit`, `ratelimit-remaining`, `ratelimit-reset`) and `retry-after`. */
export function rateLimitInfo(headers?: Record<string, string>): RateLimitInfo | undefined {
  if (!headers) return undefined;
  const info: RateLimitInfo = {
    limit: number(headers["ratelimit-limit"]),
    remaining: number(headers["ratelimit-remaining"]),
    resetSeconds: number(headers["ratelimit-reset"]),
    retryAfterSeconds: number(headers["retry-after"]),
  };
  return Object.values(info).some((v) => v !== undefined) ? info : undefined;
}

/**
 * Retryable: network failures (no status), 429, 5xx, and a request still in flight under the same key. A quota
 * answer (`daily_quota_exceeded`, `monthly_quota_exceeded`, also a 429) is not: waiting seconds does not help.
 */
export function toSendError(error: ResendError, headers?: Record<string, string>): EmailSendError {
  const status = typeof error.statusCode === "number" ? error.statusCode : null;
  const quota = error.name === "daily_quota_exceeded" ? "daily" : error.name === "monthly_quota_exceeded" ? "monthly" : undefined;
  const retryable = !quota && (status === null || status === 429 || status >= 500 || error.name === "concurrent_idempotent_requests");
  const rateLimit = rateLimitInfo(headers);
  const message = providerErrorText("Resend", status ?? error.name, error.message ?? error.name ?? "unknown error");
  return new EmailSendError(message, retryable, rateLimit?.retryAfterSeconds, { quota, status, rateLimit });
}
