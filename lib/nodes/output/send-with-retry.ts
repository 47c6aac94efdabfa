import "server-only";
import { waitUnlessStopped } from "@/lib/email/pacing";
import { EmailSendError, type EmailSender, type OutgoingEmail, type SendResult } from "@/lib/email/types";
import type { SendPacing } from "../ports";
import { NodeError } from "../types";

export const retryPolicy = {
  /** First backoff of a 5xx or network failure; doubles per attempt (full jitter), capped at maxDelayMs. */
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  /** Kept for tests that shorten the waits; the send budget, not an attempt count, decides when to give up. */
  maxAttempts: Number.POSITIVE_INFINITY,
};

/** A wait before a send was cut short because the run must stop (cancel, hand-back): the batch stays unsent. */
export class SendStopped extends Error {
  constructor() {
    super("The run was asked to stop while the batch waited to be sent");
    this.name = "SendStopped";
  }
}

export type SendContext = {
  pacing: SendPacing;
  /** Provider calls per second (EMAIL_RATE_PER_SECOND) for paced transports. */
  ratePerSecond: number;
  /** A slot of the limiter already taken for the first call (epoch ms when it starts): the first attempt waits for it. */
  firstSlotAt?: number;
  /** When the node's send budget (EMAIL_SEND_BUDGET_MINUTES from the node's start) runs out, epoch ms. */
  deadline: number;
  /** The sentence for a quota answer (it knows how many emails the node has sent so far). */
  quotaSentence: (quota: "daily" | "monthly") => Promise<string>;
  /** The sentence for a budget that ran out. */
  budgetSentence: (lastError: string) => Promise<string>;
  /** Asked during long waits (Retry-After, backoff, a held limiter): true stops the wait with SendStopped. */
  shouldStop?: () => Promise<boolean>;
};

/**
 * Sends one batch. A paced transport (Resend) takes a slot of the shared limiter before every call and feeds the
 * provider's rate-limit headers back to it. 429 waits Retry-After (shared by every sender of the key, plus jitter);
 * 5xx and network failures back off exponentially with full jitter; both go on until the node's send budget is spent.
 * A quota answer fails at once; any other refusal fails with the provider's (sanitised) message. Every wait asks
 * `ctx.shouldStop` twice a second: a cancel during a long Retry-After throws SendStopped (nothing sent, the batch
 * stays pending) so the engine stops the run at its next boundary within seconds.
 */
export async function sendBatchWithRetry(sender: EmailSender, emails: OutgoingEmail[], batchKey: string, ctx: SendContext): Promise<SendResult[]> {
  for (let attempt = 1; ; attempt++) {
    if (sender.pacingKey) {
      const slot =
        attempt === 1 && ctx.firstSlotAt !== undefined
          ? waitUnlessStopped(ctx.firstSlotAt - Date.now(), ctx.shouldStop)
          : ctx.pacing.acquire(sender.pacingKey, ctx.ratePerSecond, ctx.shouldStop);
      if (!(await slot)) throw new SendStopped();
    }
    // A cancel also abandons a call in flight: a provider that hangs must not hold the run (the batch stays pending).
    const stop = ctx.shouldStop ? watchForStop(ctx.shouldStop) : undefined;
    try {
      const options = stop ? { signal: stop.signal } : undefined;
      if (!sender.sendBatchDetailed) return await sender.sendBatch(emails, batchKey, options);
      const { results, rateLimit } = await sender.sendBatchDetailed(emails, batchKey, options);
      if (sender.pacingKey) await ctx.pacing.report(sender.pacingKey, ctx.ratePerSecond, rateLimit, 200);
      return results;
    } catch (error) {
      if (stop?.signal.aborted) throw new SendStopped();
      if (!(error instanceof EmailSendError)) throw error;
      if (error.details.quota) throw new NodeError(await ctx.quotaSentence(error.details.quota), { cause: error });
      if (!error.retryable) throw new NodeError(`The email provider refused the emails: ${error.message}`, { cause: error });
      let wait: number;
      if (error.details.status === 429 && sender.pacingKey) {
        // The shared limiter now holds every sender until Retry-After has passed; the next slot waits for it.
        await ctx.pacing.report(sender.pacingKey, ctx.ratePerSecond, error.details.rateLimit ?? { retryAfterSeconds: 1 }, 429);
        wait = 0;
      } else if (error.retryAfterSeconds !== undefined) {
        wait = Math.min(retryPolicy.maxDelayMs, error.retryAfterSeconds * 1000) + Math.random() * retryPolicy.baseDelayMs;
      } else {
        wait = Math.random() * Math.min(retryPolicy.maxDelayMs, retryPolicy.baseDelayMs * 2 ** (attempt - 1));
      }
      if (attempt >= retryPolicy.maxAttempts || Date.now() + wait > ctx.deadline) {
        throw new NodeError(await ctx.budgetSentence(error.message), { cause: error });
      }
      if (!(await waitUnlessStopped(wait, ctx.shouldStop))) throw new SendStopped();
    } finally {
      stop?.end();
    }
  }
}

/** How often a call in flight asks whether the run must stop. */
const STOP_CHECK_MS = 500;

/** A signal aborted once `shouldStop` says stop, asked every STOP_CHECK_MS until `end()`. */
function watchForStop(shouldStop: () => Promise<boolean>): { signal: AbortSignal; end(): void } {
  const controller = new AbortController();
  let ended = false;
  let timer: NodeJS.Timeout | undefined;
  const check = async () => {
    const stop = await shouldStop().catch(() => false);
    if (ended) return;
    if (stop) controller.abort(new SendStopped());
    else timer = setTimeout(check, STOP_CHECK_MS);
  };
  timer = setTimeout(check, STOP_CHECK_MS);
  return {
    signal: controller.signal,
    end() {
      ended = true;
      clearTimeout(timer);
    },
  };
}
