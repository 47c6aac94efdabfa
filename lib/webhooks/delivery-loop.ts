import "server-only";
import { EventEmitter } from "node:events";
import { sql } from "drizzle-orm";
import { execRows, getDb } from "@/db/client";
import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import { attemptDelivery, DEFAULT_DELIVERY_OPTIONS, type DeliveryOptions, type DeliveryOutcome } from "./deliver-webhook";

// The embedded deliverer (no Inngest): one loop per process that sends every due delivery. Postgres holds the
// schedule (`next_attempt_at`), so a restart loses nothing, and a claim with a lease means two processes on
// one PostgreSQL never send the same attempt twice.

export type DeliveryLoopOptions = DeliveryOptions & {
  /** How often due deliveries are looked for, besides the pokes after each finished run. */
  pollIntervalMs: number;
  /** Deliveries sent in parallel per pass. */
  batchSize: number;
};

const DEFAULT_LOOP_OPTIONS: DeliveryLoopOptions = { ...DEFAULT_DELIVERY_OPTIONS, pollIntervalMs: 1000, batchSize: 10 };

type LoopState = {
  options: DeliveryLoopOptions;
  timer: NodeJS.Timeout;
  running: Promise<void> | null;
  again: boolean;
  stopped: boolean;
};

/** Emits "attempt" (deliveryId, outcome) after every recorded attempt: tests and logs listen to it. */
export const webhookDeliveryEvents: EventEmitter = ((globalThis as { __flowmailWebhookEvents?: EventEmitter }).__flowmailWebhookEvents ??=
  new EventEmitter());

const loopHolder = globalThis as unknown as { __flowmailWebhookLoop?: LoopState };

/**
 * Claims up to `batchSize` due deliveries (pushing their next_attempt_at one lease ahead, so a crash mid-send
 * retries after the lease) and makes one attempt at each. Returns how many were attempted.
 */
export async function deliverDueWebhooks(options: DeliveryLoopOptions = DEFAULT_LOOP_OPTIONS): Promise<number> {
  const db = await getDb();
  const now = new Date();
  const leaseUntil = new Date(now.getTime() + options.timeoutMs * 3 + 5000);
  const claimed = await execRows<{ id: string }>(
    db,
    sql`update webhook_deliveries set next_attempt_at = ${leaseUntil.toISOString()}::timestamptz
        where id in (
          select id from webhook_deliveries
          where status = 'pending' and next_attempt_at <= ${now.toISOString()}::timestamptz
          order by next_attempt_at limit ${options.batchSize}
          for update skip locked)
        returning id`,
  );
  await Promise.all(
    claimed.map(async ({ id }) => {
      const outcome: DeliveryOutcome = await attemptDelivery(id, options).catch((error: unknown) => {
        log.error("webhook delivery attempt failed", { deliveryId: id, error });
        return { status: "pending", attempts: -1, retryInMs: 0 } as const;
      });
      webhookDeliveryEvents.emit("attempt", id, outcome);
    }),
  );
  return claimed.length;
}

function tick(state: LoopState): void {
  if (state.stopped) return;
  if (state.running) {
    state.again = true;
    return;
  }
  state.running = (async () => {
    do {
      state.again = false;
      try {
        // A full batch means more may be due right now: go again without waiting for the timer.
        if ((await deliverDueWebhooks(state.options)) >= state.options.batchSize) state.again = true;
      } catch (error) {
        log.error("webhook delivery pass failed", { error });
      }
    } while (state.again && !state.stopped);
  })().finally(() => {
    state.running = null;
  });
}

/**
 * Starts the process's delivery loop (once: kept on globalThis so a dev-server reload does not start another).
 * Does nothing under Inngest, where each delivery is its own durable function run.
 */
export function startWebhookDeliveryLoop(overrides: Partial<DeliveryLoopOptions> = {}): void {
  if (loopHolder.__flowmailWebhookLoop || getConfig().inngest.enabled) return;
  const options = { ...DEFAULT_LOOP_OPTIONS, ...overrides };
  const state: LoopState = { options, running: null, again: false, stopped: false, timer: undefined as never };
  state.timer = setInterval(() => tick(state), options.pollIntervalMs);
  state.timer.unref();
  loopHolder.__flowmailWebhookLoop = state;
  tick(state);
}

/** Looks for due deliveries now (after a run finished) instead of at the next poll. No-op without a loop. */
export function pokeWebhookDeliveryLoop(): void {
  const state = loopHolder.__flowmailWebhookLoop;
  if (state) tick(state);
}

export async function stopWebhookDeliveryLoop(): Promise<void> {
  const state = loopHolder.__flowmailWebhookLoop;
  if (!state) return;
  state.stopped = true;
  clearInterval(state.timer);
  loopHolder.__flowmailWebhookLoop = undefined;
  await state.running;
}
