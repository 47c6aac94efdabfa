/** One email. `idempotencyKey` is passed to the provider so a retried send is not delivered twice. */
export type OutgoingEmail = {
  to: string;
  subject: string;
  text?: string;
  html?: string;
  /** "otp" for account emails, "workflow" for OUTPUT node emails. */
  kind: "otp" | "workflow";
  idempotencyKey?: string;
};

export type SendResult = { id: string };

/** A batch failed as a whole: `retryable` for provider 429/5xx and network errors. */
export class EmailSendError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = "EmailSendError";
  }
}

/**
 * The email transport: Resend when RESEND_API_KEY is set, otherwise the local mailbox.
 * `sendBatch` takes at most 100 emails; it throws EmailSendError and never sends part of a batch twice
 * when given the same idempotency keys.
 */
export interface EmailSender {
  readonly name: "resend" | "mailbox";
  send(email: OutgoingEmail): Promise<SendResult>;
  sendBatch(emails: OutgoingEmail[], batchIdempotencyKey?: string): Promise<SendResult[]>;
}
