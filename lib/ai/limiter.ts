import "server-only";
import { sql } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import { dbState } from "@/db/handle-state";
import type { AiCallLimits, AiFeedback, AiSlot } from "@/lib/nodes/ports";
import { groupCommit } from "@/lib/group-commit";
import { aiCallPolicy } from "./generate";

/**
 * The model-call limiter shared by every run, process and instance with one provider key: the idea of the email
 * limiter (lib/email/pacing.ts) with a token budget and a bound on calls in flight. Per key, in PostgreSQL:
 * - `ai_pacing`: a virtual schedule. A call takes the next start in one atomic statement: the later of the request
 *   slot (`next_at`, moved on by 60 s / requestsPerMinute), the token budget (`token_at`, moved on by the call's
 *   estimated tokens × 60 s / tokensPerMinute, corrected by the real count after the call) and a hold (`hold_until`,
 *   set by a 429's retry-after or a window with nothing left); then it sleeps until that start. Waiting callers are
 *   spaced evenly instead of bursting.
 * - `ai_inflight`: at most maxConcurrency leased rows per key; a call holds one while it runs. A lease is short
 *   (`leaseMs`) and renewed by the live process holding it every `renewMs` (one statement per database for all its
 *   slots), so a crashed process's slots are free again within `leaseMs`: an instance taking its runs over is not held
 *   up for the length of a call timeout. A slot its holder never gives back (a bug) is renewed for the call timeout
 *   plus a margin at most, then left to expire.
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
  /** How long a slot stays leased without a renewal: what a crashed process's calls keep of the key. */
  leaseMs: 15_000,
  /** How often a live process renews the leases of its calls in flight. */
  renewMs: 4_000,
  /** The minute of requestsPerMinute and tokensPerMinute, in ms: tests shorten it to pace a small run faster. */
  minuteMs: 60_000,
};

/** The key's pacing row and its `max` in-flight slots exist (once per database handle and size). */
async function seed(db: Db, key: string, max: number): Promise<void> {
  const id = `${key}:${max}`;
  const seeded = dbState(db, "ai-limiter-seeded", () => new Set<string>());
  if (seeded.has(id)) return;
  await db.execute(sql`insert into ai_pacing (key) values (${key}) on conflict (key) do nothing`);
  await db.execute(sql`insert into ai_inflight (key, slot, lease_until) select ${key}, g, '-infinity' from generate_series(0, ${max - 1}::int) g
    on conflict (key, slot) do nothing`);
  if (seeded.size > 10_000) seeded.clear();
  seeded.add(id);
}

const leaseSeconds = () => aiLimiterPolicy.leaseMs / 1000;

/**
 * The slots this process holds on a database (`${key} ${slot}` → when it was taken: renewed until the call timeout),
 * and the timer renewing their leases while there are any.
 */
type Leases = { held: Map<string, { key: string; slot: number; at: number }>; timer?: NodeJS.Timeout };
const leasesOf = (db: Db) => dbState<Leases>(db, "ai-limiter-leases", () => ({ held: new Map() }));

function hold(db: Db, key: string, slot: number): void {
  const leases = leasesOf(db);
  leases.held.set(`${key} ${slot}`, { key, slot, at: Date.now() });
  leases.timer ??= setInterval(() => void renewLeases(db, leases), aiLimiterPolicy.renewMs).unref();
}

function letGo(db: Db, key: string, slot: number): void {
  const leases = leasesOf(db);
  leases.held.delete(`${key} ${slot}`);
  if (leases.held.size === 0 && leases.timer) {
    clearInterval(leases.timer);
    leases.timer = undefined;
  }
}

/** Renews the leases of the calls this process has in flight on the database (a failed renewal waits for the next tick). */
async function renewLeases(db: Db, leases: Leases): Promise<void> {
  const oldest = Date.now() - aiCallPolicy.timeoutMs - 30_000;
  const slots = [...leases.held.values()].filter((h) => h.at > oldest).map((h) => ({ k: h.key, s: h.slot }));
  if (slots.length === 0) return;
  await db
    .execute(
      sql`update ai_inflight f set lease_until = clock_timestamp() + make_interval(secs => ${leaseSeconds()}::float8)
          from jsonb_to_recordset(${JSON.stringify(slots)}::jsonb) as x(k text, s int)
          where f.key = x.k and f.slot = x.s and f.lease_until > '-infinity'`,
    )
    .catch(() => undefined);
}

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
  const minute = aiLimiterPolicy.minuteMs / 1000;
  const requestSecs = limits.requestsPerMinute ? (minute * margin) / limits.requestsPerMinute : 0;
  const tokenSecs = limits.tokensPerMinute ? (minute * margin * tokens) / limits.tokensPerMinute : 0;
  const burstSecs = aiLimiterPolicy.burstMs / 1000;
  for (;;) {
    if (opts.halted()) return { kind: "stopped" };
    const row = await takeSlot(db, { key, max: limits.maxConcurrency, requestSecs, burstSecs, tokenSecs });
    if (row?.slot == null) {
      if (Date.now() >= opts.deadline) return { kind: "deadline" };
      await new Promise((resolve) => setTimeout(resolve, aiLimiterPolicy.pollMs * (0.5 + Math.random())));
      continue;
    }
    const slot = Number(row.slot);
    hold(db, key, slot);
    const waitMs = Math.ceil(row.waitMs);
    if (Date.now() + waitMs > opts.deadline) {
      await freeSlot(db, key, slot);
      return { kind: "deadline" };
    }
    if (!(await sleepUnlessHalted(waitMs, opts.halted))) {
      await freeSlot(db, key, slot);
      return { kind: "stopped" };
    }
    return { kind: "ok", slot };
  }
}

type Want = { key: string; max: number; requestSecs: number; burstSecs: number; tokenSecs: number };
type Taken = { slot: number; waitMs: number } | null;

/**
 * A free in-flight slot and a start on the key's schedule, or null when every slot is leased. Group-committed: the
 * callers that ask while a statement is in flight go out together in the next one, one statement per key and limits,
 * which leases up to that many free slots and gives them successive starts in the callers' order — the starts one
 * statement per caller would have given (each moved on by the larger of the request spacing and its tokens' share).
 */
function takeSlot(db: Db, want: Want): Promise<Taken> {
  return dbState(db, "ai-limiter-take", () => groupCommit((wants: Want[]) => takeSlots(db, wants), 200))(want);
}

async function takeSlots(db: Db, wants: Want[]): Promise<Taken[]> {
  const results: Taken[] = wants.map(() => null);
  const byLimits = new Map<string, number[]>();
  wants.forEach((w, i) => {
    const id = JSON.stringify([w.key, w.max, w.requestSecs, w.burstSecs]);
    byLimits.set(id, [...(byLimits.get(id) ?? []), i]);
  });
  for (const indexes of byLimits.values()) {
    const { key, max, requestSecs, burstSecs } = wants[indexes[0]];
    const asked = JSON.stringify(indexes.map((i, o) => ({ o: o + 1, t: wants[i].tokenSecs })));
    const rows = await execRows<{ o: number | string; slot: number | string; wait_ms: number | string | null }>(
      db,
      sql`with want as (
            select x.o, x.t from jsonb_to_recordset(${asked}::jsonb) as x(o int, t float8)
          ), lease as (
            update ai_inflight f set lease_until = clock_timestamp() + make_interval(secs => ${leaseSeconds()}::float8)
            where f.key = ${key} and f.slot in (
              select slot from ai_inflight where key = ${key} and slot < ${max}::int and lease_until <= clock_timestamp()
              order by slot limit ${indexes.length}::int for update skip locked)
            returning f.slot
          ), got as (
            select w.o, l.slot, w.t, greatest(${requestSecs}::float8, w.t) as step
            from (select slot, row_number() over (order by slot) as o from lease) l join want w on w.o = l.o
          ), sched as (
            select o, slot, t, coalesce(sum(step) over (order by o rows between unbounded preceding and 1 preceding), 0) as offs from got
          ), last as (
            select offs, t from sched order by o desc limit 1
          ), paced as (
            update ai_pacing p set
              next_at = greatest(p.next_at, p.token_at, p.hold_until, clock_timestamp() - make_interval(secs => ${burstSecs}::float8)) + make_interval(secs => last.offs + ${requestSecs}::float8),
              token_at = greatest(p.next_at, p.token_at, p.hold_until, clock_timestamp() - make_interval(secs => ${burstSecs}::float8)) + make_interval(secs => last.offs + last.t),
              updated_at = now()
            from last
            where p.key = ${key}
            returning p.next_at - make_interval(secs => last.offs + ${requestSecs}::float8) as base
          )
          select s.o, s.slot, greatest(0, extract(epoch from (paced.base + make_interval(secs => s.offs) - clock_timestamp())) * 1000)::float8 as wait_ms
          from sched s cross join paced
          order by s.o`,
    );
    for (const row of rows) results[indexes[Number(row.o) - 1]] = { slot: Number(row.slot), waitMs: Number(row.wait_ms ?? 0) };
  }
  return results;
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
  letGo(db, key, slot);
  await db.execute(sql`update ai_inflight set lease_until = '-infinity' where key = ${key} and slot = ${slot}`);
}

/**
 * After a call: its slot is free again, and the schedule learns what the provider said — the real token count
 * (`tokenDelta`, real minus estimated, moves the token budget), a hold (nobody calls before it ends, plus jitter) and
 * the spacing the provider's remaining window allows. Group-committed: the releases that come while a statement is in
 * flight go out together in the next one (their token corrections summed per key, the longest hold and spacing kept),
 * so a busy key costs one statement per round trip, not one per call.
 */
export function releaseAiCall(db: Db, key: string, slot: number, limits: AiCallLimits, feedback: AiFeedback): Promise<void> {
  const tokenSecs = limits.tokensPerMinute ? ((aiLimiterPolicy.minuteMs / 1000) * aiLimiterPolicy.marginFactor * feedback.tokenDelta) / limits.tokensPerMinute : 0;
  const holdSecs = feedback.holdMs ? (feedback.holdMs + Math.random() * aiLimiterPolicy.holdJitterMs) / 1000 : 0;
  const spacingSecs = feedback.spacingMs ? feedback.spacingMs / 1000 : 0;
  letGo(db, key, slot);
  const group = dbState(db, "ai-limiter-release", () => groupCommit((items: Release[]) => releaseAll(db, items), 500));
  return group({ k: key, s: slot, t: tokenSecs, h: holdSecs, sp: spacingSecs });
}

type Release = { k: string; s: number; t: number; h: number; sp: number };

async function releaseAll(db: Db, items: Release[]): Promise<void[]> {
  await db.execute(sql`
    with b as (select * from jsonb_to_recordset(${JSON.stringify(items)}::jsonb) as x(k text, s int, t float8, h float8, sp float8)),
    freed as (update ai_inflight f set lease_until = '-infinity' from b where f.key = b.k and f.slot = b.s),
    fed as (select k, sum(t) as t, max(h) as h, max(sp) as sp from b group by k)
    update ai_pacing p set
      token_at = p.token_at + make_interval(secs => fed.t),
      hold_until = greatest(p.hold_until, clock_timestamp() + make_interval(secs => fed.h)),
      next_at = greatest(p.next_at, clock_timestamp() + make_interval(secs => fed.sp)),
      updated_at = now()
    from fed
    where p.key = fed.k and (fed.t <> 0 or fed.h > 0 or fed.sp > 0)`);
  return items.map(() => undefined);
}
