import "server-only";
import { EventEmitter } from "node:events";
import { sql } from "drizzle-orm";
import { execRows, getDb } from "@/db/client";
import { contextRunner } from "@/lib/async-context";
import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import { attemptDelivery, DEFAULT_DELIVERY_OPTIONS, type DeliveryOptions, type DeliveryOutcome } from "./deliver-webhook";

// The embedded deliverer (no Inngest): one loop per process that sends every due delivery. Postgres holds the
// schedule (`next_attempt_at`), so a restart loses nothing, and a claim with a lease means two processes on
// one PostgreSQL never send the same attempt twice.

export type DeliveryLoopOptions = DeliveryOptions & {
  /** How often due deliveries are looked for, besides the pokes after each finished run. */
  pollIntervalMs: number;
  /** Deliveries in flight at once (the loop's slots; a pass claims at most this many). */
  batchSize: number;
  /** Deliveries of one account in flight at once: one account's slow or hanging receivers never take every slot. */
  perAccount?: number;
};

const DEFAULT_LOOP_OPTIONS: DeliveryLoopOptions = { ...DEFAULT_DELIVERY_OPTIONS, pollIntervalMs: 1000, batchSize: 10, perAccount: 3 };

type Claimed = { id: string; accountId: string };

type LoopState = {
  options: DeliveryLoopOptions;
  timer: NodeJS.Timeout;
  /** Deliveries being attempted now, by id → account. */
  inFlight: Map<string, Promise<void>>;
  inFlightAccounts: Map<string, number>;
  claiming: Promise<void> | null;
  again: boolean;
  stopped: boolean;
  /** Runs a pass in the loop's own async context: a poke comes from a request (a cancel) or a run (see contextRunner). */
  detached: <T>(fn: () => T) => T;
};

/** Emits "attempt" (deliveryId, outcome) after every recorded attempt: tests and logs listen to it. */
export const webhookDeliveryEvents: EventEmitter = ((globalThis as { __flowmailWebhookEvents?: EventEmitter }).__flowmailWebhookEvents ??=
  new EventEmitter());

const loopHolder = globalThis as unknown as { __flowmailWebhookLoop?: LoopState };

/**
 * Claims up to `limit` due deliveries, at most `perAccount` per account counting `busy` (the account's deliveries
 * already in flight), pushing their next_attempt_at one lease ahead so a crash mid-send retries after the lease.
 */
async function claimDue(options: DeliveryLoopOptions, limit: number, busy: Map<string, number>): Promise<Claimed[]> {
  if (limit <= 0) return [];
  const db = await getDb();
  const now = new Date();
  const leaseUntil = new Date(now.getTime() + options.timeoutMs * 3 + 5000);
  const perAccount = options.perAccount ?? options.batchSize;
  return db.transaction(async (tx) => {
    // More candidates than slots, so one account's backlog does not hide the next account's due delivery.
    const candidates = await execRows<{ id: string; account_id: string }>(
      tx,
      sql`select d.id, w.account_id from webhook_deliveries d join webhooks w on w.id = d.webhook_id
          where d.status = 'pending' and d.next_attempt_at <= ${now.toISOString()}::timestamptz
          order by d.next_attempt_at limit ${limit * 5}
          for update of d skip locked`,
    );
    const taken = new Map(busy);
    const picked: Claimed[] = [];
    for (const row of candidates) {
      if (picked.length >= limit) break;
      const count = taken.get(row.account_id) ?? 0;
      if (count >= perAccount) continue;
      taken.set(row.account_id, count + 1);
      picked.push({ id: row.id, accountId: row.account_id });
    }
    if (picked.length === 0) return [];
    const ids = picked.map((c) => c.id);
    await execRows(
      tx,
      sql`update webhook_deliveries set next_attempt_at = ${leaseUntil.toISOString()}::timestamptz
          where id in (${sql.join(ids.map((id) => sql`${id}`), sql`, `)})`,
    );
    return picked;
  });
}

async function attemptOne(id: string, options: DeliveryLoopOptions): Promise<void> {
  const outcome: DeliveryOutcome = await attemptDelivery(id, options).catch((error: unknown) => {
    log.error("webhook delivery attempt failed", { deliveryId: id, error });
    return { status: "pending", attempts: -1, retryInMs: 0 } as const;
  });
  webhookDeliveryEvents.emit("attempt", id, outcome);
}

/**
 * One pass for tests and scripts: claims up to `batchSize` due deliveries and makes one attempt at each, waiting for
 * all of them. Returns how many were attempted. (The running loop does not wait for a pass: see `tick`.)
 */
export async function deliverDueWebhooks(options: DeliveryLoopOptions = DEFAULT_LOOP_OPTIONS): Promise<number> {
  const claimed = await claimDue(options, options.batchSize, new Map());
  await Promise.all(claimed.map(({ id }) => attemptOne(id, options)));
  return claimed.length;
}

/**
 * Fills the free slots with due deliveries. Each delivery runs on its own and frees its slot when it ends (which
 * ticks again), so a receiver that hangs until the timeout holds one slot, never the deliveries claimed with it.
 */
function tick(state: LoopState): void {
  if (state.stopped) return;
  state.detached(() => claimPass(state));
}

function claimPass(state: LoopState): void {
  if (state.claiming) {
    state.again = true;
    return;
  }
  state.claiming = (async () => {
    do {
      state.again = false;
      const free = state.options.batchSize - state.inFlight.size;
      if (free <= 0) return;
      try {
        const claimed = await claimDue(state.options, free, state.inFlightAccounts);
        for (const delivery of claimed) launch(state, delivery);
        // Every free slot filled: more may be due right now.
        if (claimed.length >= free) state.again = true;
      } catch (error) {
        log.error("webhook delivery pass failed", { error });
      }
    } while (state.again && !state.stopped);
  })().finally(() => {
    state.claiming = null;
  });
}

function launch(state: LoopState, { id, accountId }: Claimed): void {
  state.inFlightAccounts.set(accountId, (state.inFlightAccounts.get(accountId) ?? 0) + 1);
  const running = attemptOne(id, state.options).finally(() => {
    state.inFlight.delete(id);
    const left = (state.inFlightAccounts.get(accountId) ?? 1) - 1;
    if (left > 0) state.inFlightAccounts.set(accountId, left);
    else state.inFlightAccounts.delete(accountId);
    tick(state);
  });
  state.inFlight.set(id, running);
}

/**
 * Starts the process's delivery loop (once: kept on globalThis so a dev-server reload does not start another).
 * Does nothing under Inngest, where each delivery is its own durable function run.
 */
export function startWebhookDeliveryLoop(overrides: Partial<DeliveryLoopOptions> = {}): void {
  if (loopHolder.__flowmailWebhookLoop || getConfig().inngest.enabled) return;
  const options = { ...DEFAULT_LOOP_OPTIONS, ...overrides };
  const state: LoopState = {
    options, inFlight: new Map(), inFlightAccounts: new Map(), claiming: null, again: false, stopped: false, timer: undefined as never,
    detached: contextRunner(),
  };
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

/** Stops claiming and waits for the deliveries in flight to be recorded. */
export async function stopWebhookDeliveryLoop(): Promise<void> {
  const state = loopHolder.__flowmailWebhookLoop;
  if (!state) return;
  state.stopped = true;
  clearInterval(state.timer);
  loopHolder.__flowmailWebhookLoop = undefined;
  await state.claiming;
  await Promise.all(state.inFlight.values());
}
