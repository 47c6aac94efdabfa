import "server-only";
import { sql, type SQL } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import type { RateLimitInfo } from "./types";

/**
 * The provider limiter: one row per provider key in PostgreSQL, shared by every run, process
 * and instance. Each call takes the next slot in one atomic statement (`next_at` moves on by one spacing), then sleeps
 * until its slot — a virtual schedule, so N waiting callers are spaced evenly instead of bursting at each second.
 * Times come from the database clock, so instances with skewed clocks agree.
 */
export const pacingPolicy = {
  /**
   * Slots are spaced 5 % wider than 1/rate: a provider that counts calls in a sliding (or rolling) one-second window
   * at exactly our rate would otherwise see the sixth call a few milliseconds early whenever network latency varies.
   */
  marginFactor: 1.05,
  /** Jitter added to a shared Retry-After hold, so the waiting senders do not all retry in the same millisecond. */
  retryJitterMs: 100,
};

/**
 * Waits until this caller may make one provider call. A long wait (every sender held by a provider's Retry-After)
 * is cut short when `shouldStop` says so (a cancel): the answer is then false and the slot goes unused.
 */
export async function acquireSendSlot(db: Db, key: string, ratePerSecond: number, shouldStop?: () => Promise<boolean>): Promise<boolean> {
  const waitMs = await takeSlot(db, key, ratePerSecond);
  return waitUnlessStopped(waitMs, shouldStop);
}

/** How often a long wait asks whether to stop. */
export const STOP_CHECK_MS = 500;

/** Sleeps `ms`, asking `shouldStop` every STOP_CHECK_MS; answers false when it stopped early, true otherwise. */
export async function waitUnlessStopped(ms: number, shouldStop?: () => Promise<boolean>): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    const left = until - Date.now();
    if (left <= 0) return true;
    await new Promise((resolve) => setTimeout(resolve, shouldStop ? Math.min(left, STOP_CHECK_MS) : left));
    if (shouldStop && Date.now() < until && (await shouldStop())) return false;
  }
}

/** Takes the next slot and returns how many milliseconds from now it starts. */
export async function takeSlot(db: Db, key: string, ratePerSecond: number): Promise<number> {
  const [row] = await execRows<{ wait_ms: number | string }>(db, slotStatement(key, ratePerSecond));
  return Math.ceil(Number(row?.wait_ms ?? 0));
}

/**
 * The statement that takes the next slot of `key` (returns `wait_ms`, from now until the slot starts). `when`: taken
 * only if this condition holds (a CTE of a larger statement: lib/engine/pg/send-ledger.ts's recordAndBegin takes the
 * first batch's slot with the ledger rows).
 */
export function slotStatement(key: string, ratePerSecond: number, when?: SQL): SQL {
  const margin = pacingPolicy.marginFactor;
  return sql`insert into email_send_pacing as p (key, next_at, slot_at, updated_at)
        select ${key}, now() + make_interval(secs => ${margin / ratePerSecond}::float8), now(), now()
        ${when ? sql`where ${when}` : sql``}
        on conflict (key) do update set
          slot_at = greatest(p.next_at, now()),
          next_at = greatest(p.next_at, now())
            + make_interval(secs => ${margin}::float8 / least(${ratePerSecond}::float8, coalesce(p.provider_limit, ${ratePerSecond})::float8)),
          updated_at = now()
        returning greatest(0, extract(epoch from (slot_at - clock_timestamp())) * 1000)::float8 as wait_ms`;
}

/**
 * Feeds what the provider said back into the shared limiter:
 * - a 429: nobody calls before the window resets (`ratelimit-reset`, else `retry-after`), plus jitter;
 * - `ratelimit-remaining: 0`: nobody calls before `ratelimit-reset` (at most one window, 1 s: Resend's limit is per
 *   second, and a whole-second reset rounded up must not stall every sender for longer);
 * - `ratelimit-limit` below our rate: the spacing follows the provider's limit from now on.
 * Returns without a statement when the headers ask for nothing (the common case).
 */
export async function reportRateLimit(db: Db, key: string, ratePerSecond: number, info: RateLimitInfo | undefined, status?: number | null): Promise<void> {
  if (!info) return;
  let holdMs = 0;
  if (status === 429) {
    // `ratelimit-reset` is the window's precise end when the provider sends it; Retry-After is whole seconds (a
    // 429 a few milliseconds before a window ends would otherwise stall every sender for a full second).
    const seconds = info.resetSeconds !== undefined && info.remaining === 0 ? info.resetSeconds : info.retryAfterSeconds ?? 1;
    holdMs = seconds * 1000 + Math.random() * pacingPolicy.retryJitterMs;
  } else if (info.remaining === 0 && info.resetSeconds !== undefined) {
    holdMs = Math.min(info.resetSeconds, 1) * 1000;
  }
  const limit = info.limit !== undefined && info.limit > 0 && info.limit < ratePerSecond ? Math.floor(info.limit) : null;
  if (holdMs <= 0 && limit === null && knownLimits.get(key) === undefined) return;
  if (holdMs <= 0 && limit === (knownLimits.get(key) ?? null)) return;
  knownLimits.set(key, limit);
  await db.execute(sql`
    update email_send_pacing set
      next_at = greatest(next_at, now() + make_interval(secs => ${holdMs / 1000}::float8)),
      provider_limit = ${limit},
      updated_at = now()
    where key = ${key}`);
}

/** The provider limit this process last wrote per key, so an unchanged `ratelimit-limit` costs no statement. */
const knownLimits = new Map<string, number | null>();

/**
 * Takes `n` consecutive slots of `key` in one statement (a sender paced per email: SMTP, SES): the first starts
 * `waitMs` from now, the next ones every `spacingMs` (the limiter's spacing, the provider's lower limit included).
 * `margin`: how much wider than 1/rate the slots are (the sender's `pacingMargin`; pacingPolicy's by default).
 */
export async function takeSlots(
  db: Db,
  key: string,
  ratePerSecond: number,
  n: number,
  margin: number = pacingPolicy.marginFactor,
): Promise<{ waitMs: number; spacingMs: number }> {
  const [row] = await execRows<{ wait_ms: number | string; spacing_ms: number | string }>(
    db,
    sql`insert into email_send_pacing as p (key, next_at, slot_at, updated_at)
        select ${key}, now() + make_interval(secs => ${(margin * n) / ratePerSecond}::float8), now(), now()
        on conflict (key) do update set
          slot_at = greatest(p.next_at, now()),
          next_at = greatest(p.next_at, now())
            + make_interval(secs => ${margin * n}::float8 / least(${ratePerSecond}::float8, coalesce(p.provider_limit, ${ratePerSecond})::float8)),
          updated_at = now()
        returning greatest(0, extract(epoch from (slot_at - clock_timestamp())) * 1000)::float8 as wait_ms,
          (1000 * ${margin}::float8 / least(${ratePerSecond}::float8, coalesce(provider_limit, ${ratePerSecond})::float8))::float8 as spacing_ms`,
  );
  return { waitMs: Math.ceil(Number(row?.wait_ms ?? 0)), spacingMs: Number(row?.spacing_ms ?? (1000 * margin) / ratePerSecond) };
}
