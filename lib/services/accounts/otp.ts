import "server-only";
import { randomInt, timingSafeEqual } from "node:crypto";
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import { getDb } from "@/db/client";
import { otpCodes } from "@/db/schema";
import { hashToken } from "@/lib/crypto";
import { getEmailSender, EmailSendError } from "@/lib/email";
import { otpEmail } from "@/lib/email/otp-email";
import { AppError } from "@/lib/http/errors";
import { newId } from "@/lib/ids";
import { log } from "@/lib/log";
import { reserveOtpSend } from "./otp-throttle";

export const OTP_TTL_MINUTES = 10;
export const OTP_MAX_ATTEMPTS = 5;

/**
 * Emails a fresh 6-digit code to an unverified account: throttled per address, every older code voided,
 * only the hash stored. Throws 429 when throttled and 503 when the email could not be sent.
 */
export async function issueOtp(account: { id: string; email: string; fullName: string }, now: number): Promise<void> {
  const release = await reserveOtpSend(account.email, now);
  const code = String(randomInt(0, 1_000_000)).padStart(6, "0");
  const id = newId("otp");
  const db = await getDb();
  await db.transaction(async (tx) => {
    await tx.update(otpCodes).set({ consumedAt: new Date(now) })
      .where(and(eq(otpCodes.accountId, account.id), isNull(otpCodes.consumedAt)));
    await tx.insert(otpCodes).values({
      id, accountId: account.id, codeHash: hashToken(`otp:${id}:${code}`),
      expiresAt: new Date(now + OTP_TTL_MINUTES * 60_000), createdAt: new Date(now),
    });
  });
  try {
    await getEmailSender().send(otpEmail({ to: account.email, fullName: account.fullName, code, ttlMinutes: OTP_TTL_MINUTES, idempotencyKey: `otp:${id}` }));
  } catch (error) {
    await release();
    log.error("could not send the verification email", { accountId: account.id, error });
    const retryAfter = error instanceof EmailSendError && error.retryAfterSeconds ? error.retryAfterSeconds : 60;
    throw new AppError("service_unavailable", "We could not send the verification email: ask for a new code in a moment.", {
      headers: { "Retry-After": String(retryAfter) },
    });
  }
}

export type OtpCheck = "ok" | "invalid" | "exhausted";

/**
 * Checks a code against the account's newest code. Every try counts (an atomic increment, so parallel
 * guesses cannot exceed the limit); the 5th wrong try voids the code. "exhausted": the newest code was
 * burnt by wrong tries and no newer one was asked for.
 */
export async function checkOtp(accountId: string, code: string, now: number): Promise<OtpCheck> {
  const db = await getDb();
  const [latest] = await db.select().from(otpCodes).where(eq(otpCodes.accountId, accountId))
    .orderBy(desc(otpCodes.createdAt)).limit(1);
  if (!latest) return "invalid";
  if (latest.consumedAt) return latest.attempts >= OTP_MAX_ATTEMPTS ? "exhausted" : "invalid";
  if (latest.expiresAt.getTime() <= now) return "invalid";
  const [counted] = await db.update(otpCodes).set({ attempts: sql`${otpCodes.attempts} + 1` })
    .where(and(eq(otpCodes.id, latest.id), isNull(otpCodes.consumedAt), sql`${otpCodes.attempts} < ${OTP_MAX_ATTEMPTS}`))
    .returning({ attempts: otpCodes.attempts });
  if (!counted) return "exhausted";
  if (sameHash(latest.codeHash, hashToken(`otp:${latest.id}:${code}`))) {
    const [used] = await db.update(otpCodes).set({ consumedAt: new Date(now) })
      .where(and(eq(otpCodes.id, latest.id), isNull(otpCodes.consumedAt))).returning({ id: otpCodes.id });
    return used ? "ok" : "invalid";
  }
  if (counted.attempts >= OTP_MAX_ATTEMPTS) {
    await db.update(otpCodes).set({ consumedAt: new Date(now) }).where(eq(otpCodes.id, latest.id));
  }
  return "invalid";
}

function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
