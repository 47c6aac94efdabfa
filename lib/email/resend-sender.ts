import "server-only";
import { Resend } from "resend";
import { EmailSendError, type EmailSender, type OutgoingEmail, type SendResult } from "./types";

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
  }) as { from: string; to: string; subject: string; text: string; html?: string };
  return {
    name: "resend",
    async send(email) {
      const result = (await resend.emails.send(toPayload(email), { idempotencyKey: email.idempotencyKey })) as ResendResult<SendResult>;
      return { id: unwrap(result).id };
    },
    async sendBatch(emails, batchIdempotencyKey) {
      if (emails.length === 0) return [];
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
      return ids.map((row) => ({ id: row.id }));
    },
  };
}

function unwrap<T>(result: ResendResult<T>): T {
  if (result.error) throw toSendError(result.error, result.headers ?? undefined);
  if (!result.data) throw new EmailSendError("Resend answered without data", true);
  return result.data;
}

/** Retryable: network failures (no status), 429, 5xx, and a request still in flight under the same key. */
export function toSendError(error: ResendError, headers?: Record<string, string>): EmailSendError {
  const status = typeof error.statusCode === "number" ? error.statusCode : null;
  const retryable = status === null || status === 429 || status >= 500 || error.name === "concurrent_idempotent_requests";
  const retryAfter = Number(headers?.["retry-after"]);
  const message = `Resend${status ? ` ${status}` : ""}: ${error.message ?? error.name ?? "unknown error"}`;
  return new EmailSendError(message, retryable, Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : undefined);
}
