import "server-only";
import { and, eq, isNull } from "drizzle-orm";
import { getDb } from "@/db/client";
import { accounts } from "@/db/schema";
import { now as clockNow } from "@/lib/clock";
import { AppError } from "@/lib/errors";
import { assertWithinLimit, consumeRateLimit } from "@/lib/rate-limit";
import { checkOtp } from "./otp";
import { secondsUntilNextOtp } from "./otp-throttle";
import { issueTokenPair } from "./sessions";

/** Wrong codes per account per sliding hour, across every code sent (ASVS 6.6.3): a resend does not reset it. */
export const OTP_WRONG_CODES_PER_HOUR = 10;

const invalidOtp = () => new AppError("invalid_otp", "The code is wrong or has expired: check the latest email or ask for a new code.");

/** Verifies the emailed code, marks the address verified and signs the person in (first token pair). */
export async function verifyEmail(input: { email: string; otp: string }, now = clockNow()) {
  const db = await getDb();
  const [account] = await db.select({ id: accounts.id, verifiedAt: accounts.emailVerifiedAt }).from(accounts)
    .where(eq(accounts.email, input.email));
  if (!account) throw invalidOtp();
  if (account.verifiedAt) throw new AppError("already_verified", "This email address is already verified: sign in instead.");
  // A slot is taken before the check (atomic, so parallel guesses cannot exceed the cap) and handed back when right.
  const guess = await consumeRateLimit(`otp-guess:${account.id}`, OTP_WRONG_CODES_PER_HOUR, 3600, now);
  assertWithinLimit(guess, `Too many wrong codes for this address (${OTP_WRONG_CODES_PER_HOUR} per hour): try again later.`);
  const result = await checkOtp(account.id, input.otp, now);
  if (result !== "invalid") await guess.refund(); // right, or not checked at all (the code was already burnt)
  if (result === "exhausted") {
    const wait = Math.max(1, await secondsUntilNextOtp(input.email, now));
    throw new AppError("rate_limited", "Too many wrong codes: this code no longer works. Ask for a new one.", {
      headers: { "Retry-After": String(wait), "RateLimit-Limit": "5", "RateLimit-Remaining": "0", "RateLimit-Reset": String(wait) },
    });
  }
  if (result === "invalid") throw invalidOtp();
  await db.update(accounts).set({ emailVerifiedAt: new Date(now), updatedAt: new Date(now) })
    .where(and(eq(accounts.id, account.id), isNull(accounts.emailVerifiedAt)));
  return issueTokenPair(account.id, now);
}
