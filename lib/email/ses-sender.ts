import "server-only";
import { createHash } from "node:crypto";
import { GetAccountCommand, SESv2Client, SendEmailCommand } from "@aws-sdk/client-sesv2";
import MailComposer from "nodemailer/lib/mail-composer";
import { providerErrorText } from "@/lib/net/provider-message";
import { messageIdFor } from "./message-id";
import { oneCallPerEmail } from "./one-call-per-email";
import { EmailSendError, type EmailSender, type OutgoingEmail, type SendResult } from "./types";

export type SesOptions = {
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  configurationSet?: string;
  from: string;
  replyTo?: string;
  /** Another SES address (SES_ENDPOINT: tests run a local fake there). */
  endpoint?: string;
};

/** The limiter key of an SES account and region (the access key stands for the account: a hash, never the key). */
export function sesPacingKey(accessKeyId: string, region: string): string {
  return `ses:${createHash("sha256").update(accessKeyId).digest("base64url").slice(0, 22)}:${region}`;
}

function client(options: SesOptions): SESv2Client {
  return new SESv2Client({
    region: options.region,
    credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey },
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    // One attempt per call: throttling and failures are waited out by OUTPUT on the sender's shared limiter, and an
    // email is recorded `sending` around exactly one call.
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 10_000, requestTimeout: 30_000 },
  });
}

/**
 * Amazon SES (API v2). Each email goes as a raw MIME message (built by nodemailer's composer: text and HTML parts,
 * List-Unsubscribe, Reply-To and a Message-ID derived from its idempotency key), one call per email (`perEmail`).
 */
export function createSesSender(options: SesOptions): EmailSender {
  const ses = client(options);
  const send = async (email: OutgoingEmail): Promise<SendResult> => {
    const raw = await new MailComposer({
      from: options.from,
      to: email.to,
      subject: email.subject,
      text: email.text ?? (email.html === undefined ? "" : undefined),
      html: email.html,
      replyTo: email.replyTo ?? options.replyTo,
      headers: email.headers,
      ...(email.idempotencyKey ? { messageId: messageIdFor(email.idempotencyKey) } : {}),
    }).compile().build();
    try {
      const answer = await ses.send(new SendEmailCommand({
        FromEmailAddress: options.from,
        Destination: { ToAddresses: [email.to] },
        Content: { Raw: { Data: new Uint8Array(raw) } },
        ...(options.configurationSet ? { ConfigurationSetName: options.configurationSet } : {}),
      }));
      return { id: answer.MessageId ?? "" };
    } catch (error) {
      throw sesError(error, options.from);
    }
  };
  return {
    name: "ses",
    perEmail: true,
    pacingKey: sesPacingKey(options.accessKeyId, options.region),
    send,
    ...oneCallPerEmail(send),
  };
}

/** The account's sending limits (GetAccount): emails per second and per 24 hours. */
export async function readSesQuota(options: Omit<SesOptions, "from">): Promise<{ maxSendRate?: number; max24HourSend?: number }> {
  try {
    const answer = await client({ ...options, from: "" }).send(new GetAccountCommand({}));
    return { maxSendRate: answer.SendQuota?.MaxSendRate, max24HourSend: answer.SendQuota?.Max24HourSend };
  } catch (error) {
    throw sesError(error, "");
  }
}

type AwsError = { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };

const THROTTLING = new Set(["Throttling", "ThrottlingException", "TooManyRequestsException", "LimitExceededException"]);
const SENDER_REFUSED = new Set([
  "MailFromDomainNotVerifiedException", "AccountSuspendedException", "SendingPausedException", "NotFoundException",
  "AccessDeniedException", "UnrecognizedClientException", "InvalidClientTokenId", "SignatureDoesNotMatch",
  "InvalidSignatureException", "ExpiredTokenException",
]);

/**
 * What an SES failure means: throttling waits (a "daily message quota exceeded" is a quota: the node fails at once);
 * MessageRejected refuses that email — unless it names the from address (not verified): then, like an authentication
 * or account refusal, the sender itself is refused; 5xx and network failures are retried.
 */
export function sesError(error: unknown, from: string): EmailSendError {
  const e = (error ?? {}) as AwsError;
  const name = e.name ?? "Error";
  const status = e.$metadata?.httpStatusCode;
  const message = providerErrorText("Amazon SES", name, e.message ?? name);
  if (THROTTLING.has(name)) {
    if (/daily|24.?hour|quota/i.test(e.message ?? "")) return new EmailSendError(message, false, undefined, { quota: "daily", status });
    return new EmailSendError(message, true, undefined, { throttled: true, status: status ?? 429 });
  }
  if (SENDER_REFUSED.has(name)) return new EmailSendError(message, false, undefined, { refused: "sender", status });
  if (name === "MessageRejected" || name === "MessageRejectedException") {
    const address = /<([^>]+)>/.exec(from)?.[1] ?? from;
    const aboutSender = address !== "" && (e.message ?? "").toLowerCase().includes(address.toLowerCase());
    return new EmailSendError(message, false, undefined, { refused: aboutSender ? "sender" : "recipient", status });
  }
  if (status === undefined || status >= 500) return new EmailSendError(message, true, undefined, { status: status ?? null });
  return new EmailSendError(message, false, undefined, { refused: "sender", status });
}
