import "server-only";
import { randomInt, timingSafeEqual } from "node:crypto";
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import { getDb } from "@/db/client";
import { otpCodes } from "@/db/schema";
import { hashToken } from "@/lib/crypto";
import { getEmailSender, EmailSendError } from "@/lib/email";
import { otpEmail } from "@/lib/email/otp-email";
import { AppError } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { log } from "@/lib/log";
import { reserveOtpSend } from "./otp-throttle";

export const OTP_TTL_MINUTES = 10;
export const OTP_MAX_ATTEMPTS = 5;

/**
 * What a code is for: verifying the address after sign-up, or resetting a forgotten password. The two live in one table
 * told apart by their id's prefix, so a code of one kind never works for the other, and a new code voids only the older
 * codes of its own kind.
 */
export type OtpPurpose = "verify" | "reset";
const ID_PREFIX = { verify: "otp", reset: "pwr" } as const;
const ofPurpose = (purpose: OtpPurpose) => sql`left(${otpCodes.id}, 4) = ${`${ID_PREFIX[purpose]}_`}`;

/**
 * Emails a fresh 6-digit code (to an unverified account, or for a password reset to a verified one): throttled per
 * address, every older code of the same purpose voided, only the hash stored. Throws 429 when throttled and 503 when the
 * email could not be sent.
 */
export async function issueOtp(
  account: { id: string; email: string; fullName: string }, now: number, purpose: OtpPurpose = "verify",
): Promise<void> {
  const release = await reserveOtpSend(account.email, now);
  const code = String(randomInt(0, 1_000_000)).padStart(6, "0");
  const id = newId(ID_PREFIX[purpose]);
  const db = await getDb();
  await db.transaction(async (tx) => {
    await tx.update(otpCodes).set({ consumedAt: new Date(now) })
      .where(and(eq(otpCodes.accountId, account.id), isNull(otpCodes.consumedAt), ofPurpose(purpose)));
    await tx.insert(otpCodes).values({
      id, accountId: account.id, codeHash: hashToken(`otp:${id}:${code}`),
      expiresAt: new Date(now + OTP_TTL_MINUTES * 60_000), createdAt: new Date(now),
    });
  });
  try {
    await getEmailSender().send(otpEmail({
      to: account.email, fullName: account.fullName, code, ttlMinutes: OTP_TTL_MINUTES, idempotencyKey: `otp:${id}`, purpose,
    }));
  } catch (error) {
    await release();
    log.error("could not send the verification email", { accountId: account.id, error });
    const retryAfter = error instanceof EmailSendError && error.retryAfterSeconds ? error.retryAfterSeconds : 60;
    throw new AppError("service_unavailable", "We could not send the email with your code: ask for a new code in a moment.", {
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
export async function checkOtp(accountId: string, code: string, now: number, purpose: OtpPurpose = "verify"): Promise<OtpCheck> {
  const db = await getDb();
  const [latest] = await db.select().from(otpCodes).where(and(eq(otpCodes.accountId, accountId), ofPurpose(purpose)))
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
