import "server-only";
import { sql } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import type { AiCallLimits, AiFeedback, AiSlot } from "@/lib/nodes/ports";
import { aiCallPolicy } from "./generate";

/**
 * The model-call limiter shared by every run, process and instance with one provider key: the idea of the email
 * limiter (lib/email/pacing.ts) with a token budget and a bound on calls in flight. Per key, in PostgreSQL:
 * - `ai_pacing`: a virtual schedule. A call takes the next start in one atomic statement: the later of the request
 *   slot (`next_at`, moved on by 60 s / requestsPerMinute), the token budget (`token_at`, moved on by the call's
 *   estimated tokens × 60 s / tokensPerMinute, corrected by the real count after the call) and a hold (`hold_until`,
 *   set by a 429's retry-after or a window with nothing left); then it sleeps until that start. Waiting callers are
 *   spaced evenly instead of bursting.
 * - `ai_inflight`: at most maxConcurrency leased rows per key; a call holds one while it runs. A lease outlives a
 *   crashed process by the call timeout plus a margin, never longer.
 * Times come from the database clock, so instances with skewed clocks agree.
 */
export const aiLimiterPolicy = {
  /** Calls are spaced this much wider than the limit, so a provider counting in its own windows never sees one early. */
  marginFactor: 1.03,
  /** A free in-flight slot is looked for again after about this long. */
  pollMs: 50,
  /** Jitter added to a shared hold, so waiting calls do not all start in the same millisecond. */
  holdJitterMs: 100,
  /**
   * How far the schedule may lag behind now: slots left unused for up to this long (callers busy elsewhere) may still
   * be taken, in a short burst, instead of being lost for good. A provider's own bucket allows at least this much.
   */
  burstMs: 1000,
};

const seeded = new Set<string>();

/** The key's pacing row and its `max` in-flight slots exist (once per process and size). */
async function seed(db: Db, key: string, max: number): Promise<void> {
  const id = `${key}:${max}`;
  if (seeded.has(id)) return;
  await db.execute(sql`insert into ai_pacing (key) values (${key}) on conflict (key) do nothing`);
  await db.execute(sql`insert into ai_inflight (key, slot, lease_until) select ${key}, g, '-infinity' from generate_series(0, ${max - 1}::int) g
    on conflict (key, slot) do nothing`);
  if (seeded.size > 10_000) seeded.clear();
  seeded.add(id);
}

const leaseSeconds = () => aiCallPolicy.timeoutMs / 1000 + 30;

/**
 * Waits for a call of about `tokens` tokens: a free in-flight slot, then its start on the schedule. Answers the slot to
 * release after the call; `stopped` when `halted()` said stop while waiting; `deadline` when the start would come
 * after `deadline` (the node's AI budget): the caller fails instead of waiting past it.
 */
export async function acquireAiCall(
  db: Db,
  key: string,
  limits: AiCallLimits,
  tokens: number,
  opts: { deadline: number; halted: () => boolean },
): Promise<AiSlot> {
  await seed(db, key, limits.maxConcurrency);
  const margin = aiLimiterPolicy.marginFactor;
  const requestSecs = limits.requestsPerMinute ? (60 * margin) / limits.requestsPerMinute : 0;
  const tokenSecs = limits.tokensPerMinute ? (60 * margin * tokens) / limits.tokensPerMinute : 0;
  const burstSecs = aiLimiterPolicy.burstMs / 1000;
  for (;;) {
    if (opts.halted()) return { kind: "stopped" };
    const [row] = await execRows<{ slot: number | null; wait_ms: number | string | null }>(
      db,
      sql`with lease as (
            update ai_inflight set lease_until = clock_timestamp() + make_interval(secs => ${leaseSeconds()}::float8)
            where key = ${key} and slot = (
              select slot from ai_inflight where key = ${key} and slot < ${limits.maxConcurrency}::int and lease_until <= clock_timestamp()
              order by slot limit 1 for update skip locked)
            returning slot
          ), paced as (
            update ai_pacing p set
              next_at = greatest(p.next_at, p.token_at, p.hold_until, clock_timestamp() - make_interval(secs => ${burstSecs}::float8)) + make_interval(secs => ${requestSecs}::float8),
              token_at = greatest(p.next_at, p.token_at, p.hold_until, clock_timestamp() - make_interval(secs => ${burstSecs}::float8)) + make_interval(secs => ${tokenSecs}::float8),
              updated_at = now()
            where p.key = ${key} and exists (select 1 from lease)
            returning p.next_at - make_interval(secs => ${requestSecs}::float8) as start_at
          )
          select (select slot from lease) as slot,
            (select greatest(0, extract(epoch from (start_at - clock_timestamp())) * 1000) from paced)::float8 as wait_ms`,
    );
    if (row?.slot == null) {
      if (Date.now() >= opts.deadline) return { kind: "deadline" };
      await new Promise((resolve) => setTimeout(resolve, aiLimiterPolicy.pollMs * (0.5 + Math.random())));
      continue;
    }
    const slot = Number(row.slot);
    const waitMs = Math.ceil(Number(row.wait_ms ?? 0));
    if (Date.now() + waitMs > opts.deadline) {
      await freeSlot(db, key, slot);
      return { kind: "deadline" };
    }
    if (!(await sleepUnlessHalted(waitMs, opts.halted))) {
      await freeSlot(db, key, slot);
      return { kind: "stopped" };
    }
    // A long wait may have eaten into the lease: it covers the call from now.
    if (waitMs > 1000) await db.execute(sql`update ai_inflight set lease_until = clock_timestamp() + make_interval(secs => ${leaseSeconds()}::float8) where key = ${key} and slot = ${slot}`);
    return { kind: "ok", slot };
  }
}

async function sleepUnlessHalted(ms: number, halted: () => boolean): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (halted()) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(until - Date.now(), 100)));
  }
  return true;
}

async function freeSlot(db: Db, key: string, slot: number): Promise<void> {
  await db.execute(sql`update ai_inflight set lease_until = '-infinity' where key = ${key} and slot = ${slot}`);
}

/**
 * After a call: its slot is free again, and the schedule learns what the provider said — the real token count
 * (`tokenDelta`, real minus estimated, moves the token budget), a hold (nobody calls before it ends, plus jitter) and
 * the spacing the provider's remaining window allows. One statement.
 */
export async function releaseAiCall(db: Db, key: string, slot: number, limits: AiCallLimits, feedback: AiFeedback): Promise<void> {
  const tokenSecs = limits.tokensPerMinute ? (60 * aiLimiterPolicy.marginFactor * feedback.tokenDelta) / limits.tokensPerMinute : 0;
  const holdSecs = feedback.holdMs ? (feedback.holdMs + Math.random() * aiLimiterPolicy.holdJitterMs) / 1000 : 0;
  const spacingSecs = feedback.spacingMs ? feedback.spacingMs / 1000 : 0;
  await db.execute(sql`
    with freed as (update ai_inflight set lease_until = '-infinity' where key = ${key} and slot = ${slot})
    update ai_pacing set
      token_at = token_at + make_interval(secs => ${tokenSecs}::float8),
      hold_until = greatest(hold_until, clock_timestamp() + make_interval(secs => ${holdSecs}::float8)),
      next_at = greatest(next_at, clock_timestamp() + make_interval(secs => ${spacingSecs}::float8)),
      updated_at = now()
    where key = ${key} and (${tokenSecs}::float8 <> 0 or ${holdSecs}::float8 > 0 or ${spacingSecs}::float8 > 0)`);
}
