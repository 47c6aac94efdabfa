/** One email. `idempotencyKey` is passed to the provider so a retried send is not delivered twice. */
export type OutgoingEmail = {
  to: string;
  subject: string;
  text?: string;
  html?: string;
  /** The sender; the transport's configured EMAIL_FROM when absent. */
  from?: string;
  /** "otp" for account emails, "workflow" for OUTPUT node emails. */
  kind: "otp" | "workflow";
  idempotencyKey?: string;
  /** Extra headers, e.g. List-Unsubscribe and List-Unsubscribe-Post (RFC 8058) on workflow emails. */
  headers?: Record<string, string>;
  /** Reply-To (an OUTPUT node's rendered `replyTo`, else its sender's). */
  replyTo?: string;
};

export type SendResult = { id: string };

/** What the provider's `ratelimit-*` / `retry-after` headers said about its limit (seconds may be fractional). */
export type RateLimitInfo = { limit?: number; remaining?: number; resetSeconds?: number; retryAfterSeconds?: number };

/** A batch's ids and what the provider said about its rate limit. */
export type BatchResult = { results: SendResult[]; rateLimit?: RateLimitInfo };

/**
 * A batch failed as a whole: `retryable` for provider 429/5xx and network errors; `quota` when the provider's daily
 * or monthly sending quota is used up (waiting minutes does not help: the node fails at once).
 */
export class EmailSendError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterSeconds?: number,
    readonly details: {
      quota?: "daily" | "monthly";
      status?: number | null;
      rateLimit?: RateLimitInfo;
      /**
       * A permanent refusal of one email (`recipient`: an SMTP 5xx for its recipient, SES MessageRejected) — that email
       * fails and the node goes on — or of the sender itself (`sender`: authentication, an unverified from).
       */
      refused?: "recipient" | "sender";
      /** A provider's throttling answer (SMTP 421/45x, SES Throttling): wait on the sender's shared limiter. */
      throttled?: boolean;
    } = {},
  ) {
    super(message);
    this.name = "EmailSendError";
  }
}

/**
 * The email transport: Resend when RESEND_API_KEY is set, otherwise the local mailbox.
 * `sendBatch` takes at most 100 emails; it throws EmailSendError and never sends part of a batch twice
 * when given the same idempotency keys. `paced` transports share the provider limiter (lib/email/pacing.ts);
 * `pacingKey` names the provider account the limit belongs to.
 */
export interface EmailSender {
  readonly name: "resend" | "mailbox" | "smtp" | "ses";
  readonly pacingKey?: string;
  /**
   * SMTP and SES: one provider call per email, without an idempotency key. OUTPUT records each such email `sending`
   * before its call and paces every email (lib/nodes/output/send-each.ts) instead of sending batches.
   */
  readonly perEmail?: boolean;
  /**
   * How much wider than 1/rate its paced calls are spaced: pacingPolicy.marginFactor (5 %) unless set. SMTP sets 1: its
   * rate is the one the account chose, and SMTP has no per-second window of its own (a server that limits answers
   * 421/45x, which is waited out); SES's and Resend's are the provider's limit, counted over a second.
   */
  readonly pacingMargin?: number;
  send(email: OutgoingEmail, options?: SendCallOptions): Promise<SendResult>;
  sendBatch(emails: OutgoingEmail[], batchIdempotencyKey?: string, options?: SendCallOptions): Promise<SendResult[]>;
  /** sendBatch plus the provider's rate-limit headers (transports without any answer `{ results }`). */
  sendBatchDetailed?(emails: OutgoingEmail[], batchIdempotencyKey?: string, options?: SendCallOptions): Promise<BatchResult>;
}

/**
 * `signal`: aborting it abandons the call in flight (a cancel of the run); the call then rejects with the signal's
 * reason. What the provider did with an abandoned call is unknown: it is sent again under the same idempotency key.
 */
export type SendCallOptions = { signal?: AbortSignal };
