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
  const db = await getDb();
  const windowMs = windowSeconds * 1000;
  const windowStart = Math.floor(now / windowMs) * windowMs;
  const [row] = await execRows<{ count: number }>(
    db,
    sql`insert into rate_limits (key, window_start, count) values (${key}, ${windowStart}, 1)
        on conflict (key, window_start) do update set count = rate_limits.count + 1
        returning count`,
  );
  const count = Number(row.count);
  const resetSeconds = Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000));
  return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), resetSeconds };
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
