import "server-only";
import { sql } from "drizzle-orm";
import { execRows, getDb } from "@/db/client";
import { AppError } from "@/lib/http/errors";

export type RateLimitResult = { allowed: boolean; limit: number; remaining: number; resetSeconds: number };

/**
 * Fixed-window counter in Postgres (shared by every app instance): counts one hit for `key` in the current
 * window and says whether it is within `limit`.
 */
export async function consumeRateLimit(key: string, limit: number, windowSeconds: number, now = Date.now()): Promise<RateLimitResult> {
  const windowMs = windowSeconds * 1000;
  const windowStart = Math.floor(now / windowMs) * windowMs;
  const count = await countHit(key, windowStart);
  const resetSeconds = Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000));
  return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), resetSeconds };
}

type HitWaiter = { resolve: (count: number) => void; reject: (error: unknown) => void };

/** Hits waiting for the next upsert of their counter row, by `key` + window. */
const queuedHits = new Map<string, HitWaiter[]>();
const flushingCounters = new Set<string>();

/**
 * Counts one hit and answers the counter value of that hit. Concurrent hits on one counter row are folded into one
 * upsert (`count + n`) per round trip: every upsert of a row waits for the previous one's commit (row lock), so one
 * upsert per request caps a busy account at one request per commit (~100/s under load). The first hit goes out at
 * once; hits arriving while it is in flight go together in the next upsert and get consecutive values, exactly as if
 * they had been counted one by one.
 */
function countHit(key: string, windowStart: number): Promise<number> {
  const id = `${key}\u0000${windowStart}`;
  return new Promise((resolve, reject) => {
    const queue = queuedHits.get(id);
    if (queue) queue.push({ resolve, reject });
    else queuedHits.set(id, [{ resolve, reject }]);
    if (!flushingCounters.has(id)) void flushCounter(id, key, windowStart);
  });
}

async function flushCounter(id: string, key: string, windowStart: number): Promise<void> {
  flushingCounters.add(id);
  try {
    for (let batch = queuedHits.get(id); batch?.length; batch = queuedHits.get(id)) {
      queuedHits.delete(id);
      try {
        const last = await upsertCount(key, windowStart, batch.length);
        batch.forEach((waiter, i) => waiter.resolve(last - batch.length + 1 + i));
      } catch (error) {
        batch.forEach((waiter) => waiter.reject(error));
      }
    }
  } finally {
    flushingCounters.delete(id);
  }
}

async function upsertCount(key: string, windowStart: number, hits: number): Promise<number> {
  const db = await getDb();
  const [row] = await execRows<{ count: number }>(
    db,
    sql`insert into rate_limits (key, window_start, count) values (${key}, ${windowStart}, ${hits})
        on conflict (key, window_start) do update set count = rate_limits.count + ${hits}
        returning count`,
  );
  return Number(row.count);
}

/** Reads the current count without consuming (for "N failures in the window" checks). */
export async function peekRateLimit(key: string, windowSeconds: number, now = Date.now()): Promise<number> {
  const db = await getDb();
  const windowMs = windowSeconds * 1000;
  const windowStart = Math.floor(now / windowMs) * windowMs;
  const [row] = await execRows<{ count: number }>(
    db,
    sql`select count from rate_limits where key = ${key} and window_start = ${windowStart}`,
  );
  return row ? Number(row.count) : 0;
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
