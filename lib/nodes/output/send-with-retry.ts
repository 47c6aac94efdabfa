import "server-only";
import { EmailSendError, type EmailSender, type OutgoingEmail, type SendResult } from "@/lib/email/types";
import { NodeError } from "../types";

export const retryPolicy = {
  maxAttempts: 6,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  /** A batch gives up after this long, so a provider outage fails the node instead of hanging the run. */
  maxTotalMs: 120_000,
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends one batch; provider 429/5xx/network errors are retried with backoff honouring Retry-After. */
export async function sendBatchWithRetry(sender: EmailSender, emails: OutgoingEmail[], batchKey: string): Promise<SendResult[]> {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await sender.sendBatch(emails, batchKey);
    } catch (error) {
      if (!(error instanceof EmailSendError)) throw error;
      if (!error.retryable) throw new NodeError(`The email provider refused the emails: ${error.message}`, { cause: error });
      const backoff = Math.min(retryPolicy.maxDelayMs, retryPolicy.baseDelayMs * 2 ** (attempt - 1));
      const wait = error.retryAfterSeconds !== undefined ? Math.min(retryPolicy.maxDelayMs, error.retryAfterSeconds * 1000) : backoff;
      if (attempt >= retryPolicy.maxAttempts || Date.now() - started + wait > retryPolicy.maxTotalMs) {
        throw new NodeError(`The email provider kept failing after ${attempt} attempts: ${error.message}. Try the run again later.`, {
          cause: error,
        });
      }
      await sleep(wait);
    }
  }
}
