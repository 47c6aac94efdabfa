import "server-only";
import { createHash } from "node:crypto";
import http from "node:http";
import https from "node:https";
import { providerErrorText } from "@/lib/net/provider-message";
import { EmailSendError, type BatchResult, type EmailSender, type OutgoingEmail, type RateLimitInfo, type SendResult } from "./types";

export const RESEND_BATCH_LIMIT = 100;

type ResendError = { message?: string; statusCode?: number | null; name?: string };
type ResendResult<T> = { data: T | null; error: ResendError | null; headers?: Record<string, string> | null };

const DEFAULT_BASE_URL = "https://api.resend.com";
const USER_AGENT = "flowmail";

/** Kept-alive connections to Resend, shared by every sender of the process. */
const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

/**
 * One POST to Resend's REST API, answered as the `resend` SDK (6.x) answers: `{ data, error, headers }` and never a
 * throw — `error` is Resend's JSON error body (`{ statusCode, name, message }`), an `application_error` with the HTTP
 * status when that body is not JSON, or with `statusCode: null` when the request got no answer (a network failure).
 * Plain node:http with kept-alive connections instead of the SDK: the SDK's fetch cost ~2.6 ms of CPU per call on the
 * benchmark VM, this ~0.3 ms (issue 18: one call per tiny run).
 */
export function postToResend(
  options: { apiKey: string; baseUrl?: string },
  path: string,
  entity: unknown,
  headers: Record<string, string> = {},
): Promise<ResendResult<unknown>> {
  const body = JSON.stringify(entity);
  return new Promise((resolve) => {
    let settled = false;
    const answer = (result: ResendResult<unknown>) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const unreachable = () =>
      answer({ data: null, error: { name: "application_error", statusCode: null, message: "Unable to fetch data. The request could not be resolved." }, headers: null });
    let request: http.ClientRequest;
    try {
      const url = new URL(`${options.baseUrl ?? DEFAULT_BASE_URL}${path}`);
      const secure = url.protocol === "https:";
      request = (secure ? https : http).request(
        url,
        {
          method: "POST",
          agent: secure ? agents.https : agents.http,
          headers: {
            Authorization: `Bearer ${options.apiKey}`,
            "User-Agent": USER_AGENT,
            "Content-Type": "application/json",
            "Content-Length": String(Buffer.byteLength(body)),
            ...headers,
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("error", unreachable);
          response.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            const status = response.statusCode ?? 0;
            const answered: Record<string, string> = {};
            for (const [name, value] of Object.entries(response.headers)) {
              if (value !== undefined) answered[name] = Array.isArray(value) ? value.join(", ") : value;
            }
            if (status >= 200 && status < 300) {
              try {
                answer({ data: JSON.parse(text) as unknown, error: null, headers: answered });
              } catch {
                unreachable();
              }
              return;
            }
            try {
              answer({ data: null, error: JSON.parse(text) as ResendError, headers: answered });
            } catch {
              answer({
                data: null,
                error: { name: "application_error", statusCode: status, message: "Internal server error. We are unable to process your request right now, please try again later." },
                headers: answered,
              });
            }
          });
        },
      );
    } catch {
      unreachable();
      return;
    }
    request.on("error", unreachable);
    request.end(body);
  });
}

/**
 * The Resend transport. Resend's answers come as `{ data, error }` (postToResend), where `error.statusCode` is the
 * HTTP status (null for a network failure), so errors are turned into EmailSendError here.
 */
export function createResendSender(options: { apiKey: string; baseUrl?: string; from: string }): EmailSender {
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
    const result = (await postToResend(options, "/emails/batch", emails.map(toPayload), {
      "x-batch-validation": "strict",
      ...(batchIdempotencyKey ? { "Idempotency-Key": batchIdempotencyKey } : {}),
    })) as ResendResult<{ data: SendResult[] }>;
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
      const result = (await postToResend(options, "/emails", toPayload(email), email.idempotencyKey ? { "Idempotency-Key": email.idempotencyKey } : {})) as ResendResult<SendResult>;
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
