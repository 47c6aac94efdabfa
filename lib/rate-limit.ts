import "server-only";
import { sql, type SQL } from "drizzle-orm";
import { execRows, getDb, type Db } from "@/db/client";
import { AppError } from "@/lib/errors";

export type RateLimitResult = { allowed: boolean; limit: number; remaining: number; resetSeconds: number };
/** An allowed hit can be handed back (a sign-in that turned out right is not a failure). */
export type RateLimitHit = RateLimitResult & { refund: () => Promise<void> };

/**
 * A window is counted in this many slices. A hit counts from its instant until between one window and one window +
 * one slice later, so at most `limit` hits are ever allowed within any span of `windowSeconds` (a strict sliding
 * window: no burst at a clock-aligned boundary), with one small counter row per slice in use.
 */
export const RATE_LIMIT_SLICES = 10;

/**
 * Counts one hit for `key` and says whether it is within `limit` hits per sliding `windowSeconds` (shared by every app
 * instance through Postgres). Increment and check are one atomic step: each hit gets its own rank from the counter
 * row's upsert, so N parallel hits allow exactly the ones ranked within the limit, never more. A refused hit is handed
 * back at once (it does not count), so a client that keeps knocking still gets `limit` per window.
 */
export async function consumeRateLimit(key: string, limit: number, windowSeconds: number, now = Date.now()): Promise<RateLimitHit> {
  const slice = rateLimitSlice(key, windowSeconds, now);
  const result = rateLimitResult(slice, limit, await countHit(slice), now);
  const refund = () => decrement(key, slice.sliceStart, 1);
  if (!result.allowed) await refund();
  return { ...result, refund: result.allowed ? refund : async () => {} };
}

/** The counter row a hit at `now` goes to (`sliceStart`), and where the window's earlier slices begin. */
export type RateLimitSlice = { key: string; sliceStart: number; firstCounted: number; sliceMs: number };
/** A hit's rank within its slice's count, and the (settled) count and oldest start of the earlier slices in the window. */
export type HitCount = { rank: number; earlier: number; oldest: number | null };

export function rateLimitSlice(key: string, windowSeconds: number, now: number): RateLimitSlice {
  const windowMs = windowSeconds * 1000;
  const sliceMs = Math.max(1, Math.floor(windowMs / RATE_LIMIT_SLICES));
  const sliceStart = Math.floor(now / sliceMs) * sliceMs;
  return { key, sliceStart, firstCounted: sliceStart - sliceMs * RATE_LIMIT_SLICES, sliceMs };
}

/** Whether a counted hit is within `limit`, with what the RateLimit-* headers say. */
export function rateLimitResult(slice: RateLimitSlice, limit: number, hit: HitCount, now: number): RateLimitResult {
  const total = hit.earlier + hit.rank;
  // The oldest slice still counted leaves the window one window + one slice after it began.
  const resetAt = (hit.oldest ?? slice.sliceStart) + slice.sliceMs * (RATE_LIMIT_SLICES + 1);
  const resetSeconds = Math.max(1, Math.ceil((resetAt - now) / 1000));
  return { allowed: total <= limit, limit, remaining: Math.max(0, limit - total), resetSeconds };
}

/**
 * Hands back refused hits, as one statement for a batch (`count` never below 0), and drops the slices that left the
 * window of each key whose current slice these hits opened — what consumeRateLimit does around its upsert, for a
 * caller that counted the hits in a statement of its own (the enqueue hot path).
 */
export async function settleCountedHits(
  db: Db,
  refunds: { key: string; sliceStart: number; hits: number }[],
  opened: { key: string; firstCounted: number }[],
): Promise<void> {
  if (refunds.length > 0) {
    await execRows(
      db,
      sql`update rate_limits set count = greatest(rate_limits.count - r.hits, 0)
          from jsonb_to_recordset(${JSON.stringify(refunds.map((r) => ({ key: r.key, slice_start: r.sliceStart, hits: r.hits })))}::jsonb)
            as r(key text, slice_start bigint, hits int)
          where rate_limits.key = r.key and rate_limits.window_start = r.slice_start`,
    );
  }
  if (opened.length > 0) {
    await execRows(
      db,
      sql`delete from rate_limits using jsonb_to_recordset(${JSON.stringify(opened.map((o) => ({ key: o.key, first_counted: o.firstCounted })))}::jsonb)
            as o(key text, first_counted bigint)
          where rate_limits.key = o.key and rate_limits.window_start < o.first_counted`,
    );
  }
}

type Slice = Pick<RateLimitSlice, "key" | "sliceStart" | "firstCounted">;
type HitWaiter = { resolve: (count: HitCount) => void; reject: (error: unknown) => void };

/** Hits waiting for the next upsert of their counter row, by `key` + slice. */
const queuedHits = new Map<string, HitWaiter[]>();
const flushingCounters = new Set<string>();

/**
 * Counts one hit and answers its rank within its slice plus the (settled) count of the earlier slices. Concurrent hits
 * on one counter row are folded into one upsert (`count + n`) per round trip: every upsert of a row waits for the
 * previous one's commit (row lock), so one upsert per request caps a busy account at one request per commit (~100/s
 * under load). The first hit goes out at once; hits arriving while it is in flight go together in the next upsert and
 * get consecutive ranks, exactly as if they had been counted one by one.
 */
function countHit(slice: Slice): Promise<HitCount> {
  const id = `${slice.key}\u0000${slice.sliceStart}\u0000${slice.firstCounted}`;
  return new Promise((resolve, reject) => {
    const queue = queuedHits.get(id);
    if (queue) queue.push({ resolve, reject });
    else queuedHits.set(id, [{ resolve, reject }]);
    if (!flushingCounters.has(id)) void flushCounter(id, slice);
  });
}

async function flushCounter(id: string, slice: Slice): Promise<void> {
  flushingCounters.add(id);
  try {
    for (let batch = queuedHits.get(id); batch?.length; batch = queuedHits.get(id)) {
      queuedHits.delete(id);
      try {
        const { count, earlier, oldest } = await upsertCount(slice, batch.length);
        batch.forEach((waiter, i) => waiter.resolve({ rank: count - batch.length + 1 + i, earlier, oldest }));
      } catch (error) {
        batch.forEach((waiter) => waiter.reject(error));
      }
    }
  } finally {
    flushingCounters.delete(id);
  }
}

/**
 * One statement: the upsert of the current slice (its row lock orders concurrent hits) and the sum of the earlier
 * slices still in the window. Earlier slices only ever shrink (refunds), so a stale read can only refuse, never allow.
 */
async function upsertCount(slice: Slice, hits: number): Promise<{ count: number; earlier: number; oldest: number | null }> {
  const db = await getDb();
  const { key, sliceStart, firstCounted } = slice;
  const [row] = await execRows<{ count: number; earlier: number | string; oldest: number | string | null }>(
    db,
    sql`with hit as (
          insert into rate_limits (key, window_start, count) values (${key}, ${sliceStart}, ${hits})
          on conflict (key, window_start) do update set count = rate_limits.count + ${hits}
          returning count)
        select hit.count, ${windowBeforeSlice(sql`${key}`, sql`${firstCounted}`, sql`${sliceStart}`)}
        from hit`,
  );
  const count = Number(row.count);
  // The first hit of a new slice sweeps this key's slices that left the window.
  if (count === hits) {
    await execRows(db, sql`delete from rate_limits where key = ${key} and window_start < ${firstCounted}`);
  }
  return { count, earlier: Number(row.earlier), oldest: row.oldest === null ? null : Number(row.oldest) };
}

/**
 * The sliding window before a hit's slice, as two select-list columns: `earlier`, the count of the key's earlier slices
 * still in the window, and `oldest`, the start of the oldest of them that counts. The one definition of the window in
 * SQL, used by consumeRateLimit and by the enqueue statement that counts its hits itself.
 */
export function windowBeforeSlice(key: SQL, firstCounted: SQL, sliceStart: SQL): SQL {
  return sql`(select coalesce(sum(l.count), 0) from rate_limits l
      where l.key = ${key} and l.window_start >= ${firstCounted} and l.window_start < ${sliceStart}) as earlier,
    (select min(l.window_start) from rate_limits l
      where l.key = ${key} and l.window_start >= ${firstCounted} and l.window_start < ${sliceStart} and l.count > 0) as oldest`;
}

async function decrement(key: string, sliceStart: number, hits: number): Promise<void> {
  const db = await getDb();
  await execRows(
    db,
    sql`update rate_limits set count = greatest(count - ${hits}, 0) where key = ${key} and window_start = ${sliceStart}`,
  );
}

export function rateLimitHeaders(r: RateLimitResult): Record<string, string> {
  return {
    "RateLimit-Limit": String(r.limit),
    "RateLimit-Remaining": String(r.remaining),
    "RateLimit-Reset": String(r.resetSeconds),
  };
}

/** Throws 429 rate_limited with Retry-After and RateLimit-* headers when the result is over the limit. */
export function assertWithinLimit(r: RateLimitResult, detail: string): void {
  if (r.allowed) return;
  throw new AppError("rate_limited", detail, {
    headers: { "Retry-After": String(r.resetSeconds), ...rateLimitHeaders(r) },
  });
}
