import "server-only";
import { createHash } from "node:crypto";
import { Resend } from "resend";
import { providerErrorText } from "@/lib/net/provider-message";
import { EmailSendError, type BatchResult, type EmailSender, type OutgoingEmail, type RateLimitInfo, type SendCallOptions, type SendResult } from "./types";

export const RESEND_BATCH_LIMIT = 100;

/**
 * How long one call to Resend may take. A call that hangs past it is abandoned as a network failure (retryable), so
 * the same call goes again under its idempotency key: Resend delivers a key once, whichever attempt got through.
 * Tests shorten it.
 */
export const resendCallPolicy = { timeoutMs: 30_000 };

/**
 * Makes one SDK call under the call timeout and the caller's signal. The SDK swallows an abort into a network error
 * (`statusCode: null`): a caller's abort is rethrown as its reason, a timeout becomes a retryable EmailSendError.
 */
async function timedCall<T>(call: (signal: AbortSignal) => Promise<ResendResult<T>>, options?: SendCallOptions): Promise<ResendResult<T>> {
  options?.signal?.throwIfAborted();
  const timeout = AbortSignal.timeout(resendCallPolicy.timeoutMs);
  const signal = options?.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  const result = await call(signal);
  options?.signal?.throwIfAborted();
  if (timeout.aborted && result.error) {
    throw new EmailSendError(`Resend did not answer within ${resendCallPolicy.timeoutMs / 1000} s`, true, undefined, { status: null });
  }
  return result;
}

type ResendError = { message?: string; statusCode?: number | null; name?: string };
type ResendResult<T> = { data: T | null; error: ResendError | null; headers?: Record<string, string> | null };

/**
 * The Resend transport. The SDK never throws: it answers `{ data, error }`, where `error.statusCode` is the
 * HTTP status (null for a network failure), so errors are turned into EmailSendError here.
 */
export function createResendSender(options: { apiKey: string; baseUrl?: string; from: string }): EmailSender {
  const resend = new Resend(options.apiKey, options.baseUrl ? { baseUrl: options.baseUrl } : undefined);
  const toPayload = (email: OutgoingEmail) => ({
    from: email.from ?? options.from,
    to: email.to,
    subject: email.subject,
    // Resend needs a text or an html body; send both when both exist.
    html: email.html,
    text: email.text ?? (email.html === undefined ? "" : undefined),
    // An OUTPUT node's Reply-To (rendered per item) travels as a header, as Resend's API takes any header.
    ...(email.headers || email.replyTo ? { headers: { ...email.headers, ...(email.replyTo ? { "Reply-To": email.replyTo } : {}) } } : {}),
  }) as { from: string; to: string; subject: string; text: string; html?: string; headers?: Record<string, string> };
  const sendBatchDetailed = async (emails: OutgoingEmail[], batchIdempotencyKey?: string, options?: SendCallOptions): Promise<BatchResult> => {
    if (emails.length === 0) return { results: [] };
    if (emails.length > RESEND_BATCH_LIMIT) {
      throw new EmailSendError(`A batch holds at most ${RESEND_BATCH_LIMIT} emails (got ${emails.length})`, false);
    }
    const payload = emails.map(toPayload);
    const result = (await timedCall(
      (signal) => resend.batch.send(payload, { idempotencyKey: batchIdempotencyKey, signal }),
      options,
    )) as ResendResult<{ data: SendResult[] }>;
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
    async send(email, options) {
      const payload = toPayload(email);
      const result = (await timedCall((signal) => resend.emails.send(payload, { idempotencyKey: email.idempotencyKey, signal }), options)) as ResendResult<SendResult>;
      return { id: unwrap(result).id };
    },
    sendBatch: async (emails, key, options) => (await sendBatchDetailed(emails, key, options)).results,
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
 * Error names that are refusals whatever the status says: Resend sometimes describes a refusal only in its body
 * (`{ name, message }` without `statusCode`), which would otherwise read as a network failure and be retried for
 * the whole send budget.
 */
const REFUSAL_NAME = /^(validation_error|restricted_api_key|invalid_.+|missing_.+)$/;

/**
 * Retryable: network failures (no status, and no refusal named), 429, 5xx, and a request still in flight under the
 * same key. A quota answer (`daily_quota_exceeded`, `monthly_quota_exceeded`, also a 429) is not: waiting seconds
 * does not help; nor is a refusal named in the body (REFUSAL_NAME).
 */
export function toSendError(error: ResendError, headers?: Record<string, string>): EmailSendError {
  const status = typeof error.statusCode === "number" ? error.statusCode : null;
  const quota = error.name === "daily_quota_exceeded" ? "daily" : error.name === "monthly_quota_exceeded" ? "monthly" : undefined;
  const refusal = typeof error.name === "string" && REFUSAL_NAME.test(error.name);
  const retryable =
    !quota && !refusal && (status === null || status === 429 || status >= 500 || error.name === "concurrent_idempotent_requests");
  const rateLimit = rateLimitInfo(headers);
  const message = providerErrorText("Resend", status ?? error.name, error.message ?? error.name ?? "unknown error");
  return new EmailSendError(message, retryable, rateLimit?.retryAfterSeconds, { quota, status, rateLimit });
}
