import "server-only";
import { and, desc, eq, gt, lt } from "drizzle-orm";
import { getDb } from "@/db/client";
import { rateLimits } from "@/db/schema";
import { AppError } from "@/lib/errors";

export const OTP_COOLDOWN_SECONDS = 60;
export const OTP_SENDS_PER_HOUR = 5;
const HOUR_MS = 3600_000;

const keyOf = (email: string) => `otp-send:${email}`;

/**
 * Reserves one code email for `email`: at most one per 60 s and 5 per rolling hour. It is keyed by the
 * address, not the account, so an unknown address is throttled exactly like a known one (no existence leak).
 * Each send is one row of `rate_limits` (window_start = its instant); a reservation is inserted first and
 * withdrawn when it breaks a rule, so two concurrent requests cannot both slip through.
 * Returns a release function for when the email could not be sent after all.
 */
export async function reserveOtpSend(email: string, now: number): Promise<() => Promise<void>> {
  const db = await getDb();
  const key = keyOf(email);
  // Rows older than the longest rule are dead weight: drop them as we go.
  await db.delete(rateLimits).where(and(eq(rateLimits.key, key), lt(rateLimits.windowStart, now - HOUR_MS)));
  const inserted = await db.insert(rateLimits).values({ key, windowStart: now, count: 1 }).onConflictDoNothing().returning();
  const recent = await db.select({ at: rateLimits.windowStart }).from(rateLimits)
    .where(and(eq(rateLimits.key, key), gt(rateLimits.windowStart, now - HOUR_MS))).orderBy(desc(rateLimits.windowStart));
  const others = inserted.length ? removeOne(recent.map((r) => r.at), now) : recent.map((r) => r.at);
  const release = async () => {
    if (inserted.length) await db.delete(rateLimits).where(and(eq(rateLimits.key, key), eq(rateLimits.windowStart, now)));
  };
  const last = others.length ? Math.max(...others) : undefined;
  const retryAfter = (untilMs: number) => Math.max(1, Math.ceil((untilMs - now) / 1000));
  if (last !== undefined && now - last < OTP_COOLDOWN_SECONDS * 1000) {
    await release();
    throw throttled(`Wait ${retryAfter(last + OTP_COOLDOWN_SECONDS * 1000)} s before asking for another code.`, retryAfter(last + OTP_COOLDOWN_SECONDS * 1000));
  }
  if (others.length >= OTP_SENDS_PER_HOUR) {
    await release();
    const oldest = Math.min(...others);
    throw throttled(`At most ${OTP_SENDS_PER_HOUR} codes per hour: try again later.`, retryAfter(oldest + HOUR_MS));
  }
  return release;
}

/** Seconds until a new code may be requested (0 when it may be now), for the 429 after burnt attempts. */
export async function secondsUntilNextOtp(email: string, now: number): Promise<number> {
  const db = await getDb();
  const [last] = await db.select({ at: rateLimits.windowStart }).from(rateLimits)
    .where(eq(rateLimits.key, keyOf(email))).orderBy(desc(rateLimits.windowStart)).limit(1);
  if (!last) return 0;
  return Math.max(0, Math.ceil((last.at + OTP_COOLDOWN_SECONDS * 1000 - now) / 1000));
}

function removeOne(values: number[], value: number): number[] {
  const index = values.indexOf(value);
  return index < 0 ? values : [...values.slice(0, index), ...values.slice(index + 1)];
}

function throttled(detail: string, retryAfterSeconds: number): AppError {
  return new AppError("rate_limited", detail, {
    headers: {
      "Retry-After": String(retryAfterSeconds),
      "RateLimit-Limit": String(OTP_SENDS_PER_HOUR),
      "RateLimit-Remaining": "0",
      "RateLimit-Reset": String(retryAfterSeconds),
    },
  });
}
