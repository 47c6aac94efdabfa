/*
 * Email provider calls, observed: a `send.batch` span per call (transport, emails, status code) and the emails and
 * provider-answers metrics. `instrumentSender` wraps any EmailSender (Resend, the mailbox, a deployment's or an
 * account's own provider) without the sender knowing.
 */
import type { EmailSender, SendCallOptions } from "@/lib/email/types";
import { metrics } from "./metrics";
import { withSpan } from "./tracing";

/** The HTTP status of a failed call when the error says it (EmailSendError's details, an SDK's statusCode), else 0. */
function statusOf(error: unknown): number {
  const e = error as { details?: { status?: number | null }; statusCode?: number; status?: number; responseCode?: number; $metadata?: { httpStatusCode?: number } };
  const status = e?.details?.status ?? e?.statusCode ?? e?.$metadata?.httpStatusCode ?? e?.status ?? e?.responseCode;
  return typeof status === "number" && Number.isFinite(status) ? status : 0;
}

/** One provider call of `count` emails, observed (`success` is the status a transport answering at all means: 200). */
export async function observeSendCall<T>(transport: string, count: number, call: () => Promise<T>): Promise<T> {
  return withSpan("send.batch", { "flowmail.send.transport": transport, "flowmail.send.emails": count }, async (span) => {
    try {
      const result = await call();
      span?.setAttribute("http.response.status_code", 200);
      metrics.providerAnswer(transport, 200);
      metrics.emails(transport, "sent", count);
      return result;
    } catch (error) {
      const status = statusOf(error);
      span?.setAttribute("http.response.status_code", status);
      metrics.providerAnswer(transport, status);
      metrics.emails(transport, "failed", count);
      throw error;
    }
  });
}

const instrumented = new WeakSet<EmailSender>();

/** The sender with every provider call observed (a sender already wrapped is returned as it is). */
export function instrumentSender<S extends EmailSender>(sender: S): S {
  if (instrumented.has(sender)) return sender;
  const transport = sender.name;
  const wrapped: S = {
    ...sender,
    // The call options (a cancel's AbortSignal) go through: dropping them would make a hung call hold a cancelled run.
    send: (email, options) => observeSendCall(transport, 1, () => sender.send(email, options)),
    sendBatch: (emails, key, options) => observeSendCall(transport, emails.length, () => sender.sendBatch(emails, key, options)),
    ...(sender.sendBatchDetailed
      ? {
          sendBatchDetailed: (emails: Parameters<NonNullable<S["sendBatchDetailed"]>>[0], key?: string, options?: SendCallOptions) =>
            observeSendCall(transport, emails.length, () => sender.sendBatchDetailed!(emails, key, options)),
        }
      : {}),
  };
  instrumented.add(wrapped);
  return wrapped;
}
