import "server-only";
import { eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { accounts } from "@/db/schema";
import { assertStrongPassword } from "@/lib/auth/password-strength";
import { hashPassword } from "@/lib/auth/passwords";
import { now as clockNow } from "@/lib/clock";
import { AppError } from "@/lib/errors";
import { assertWithinLimit, consumeRateLimit } from "@/lib/rate-limit";
import { checkOtp, issueOtp } from "./otp";
import { reserveOtpSend, secondsUntilNextOtp } from "./otp-throttle";
import { issueTokenPair, revokeAllRefreshTokens } from "./sessions";
import { OTP_WRONG_CODES_PER_HOUR } from "./verify-email";

export const FORGOT_PASSWORD_MESSAGE = "If a verified account uses this address, a reset code is on its way.";

/**
 * Emails a password-reset code to a verified account. Unknown and unverified addresses get the same answer and go
 * through the same per-address throttle as every other code email (one per minute, five per hour), so the endpoint
 * reveals nothing about which addresses have accounts.
 */
export async function forgotPassword(email: string, now = clockNow()) {
  const db = await getDb();
  const [account] = await db.select().from(accounts).where(eq(accounts.email, email));
  if (account?.emailVerifiedAt) await issueOtp(account, now, "reset");
  else await reserveOtpSend(email, now);
  return { message: FORGOT_PASSWORD_MESSAGE };
}

const invalidOtp = () => new AppError("invalid_otp", "The code is wrong or has expired: check the latest email or ask for a new code.");

/**
 * Sets a new password with the emailed reset code and signs the person in. The password is checked first (a weak one
 * costs no guess), then the code like a sign-up code: five tries per code, ten wrong codes per account per hour. Every
 * earlier refresh token is revoked and `passwordChangedAt` refuses every access token and browser session issued
 * before.
 */
export async function resetPassword(input: { email: string; otp: string; newPassword: string }, now = clockNow()) {
  await assertStrongPassword(input.newPassword, [input.email], "newPassword");
  const db = await getDb();
  const [account] = await db.select().from(accounts).where(eq(accounts.email, input.email));
  if (!account?.emailVerifiedAt) throw invalidOtp();
  const guess = await consumeRateLimit(`otp-guess:${account.id}`, OTP_WRONG_CODES_PER_HOUR, 3600, now);
  assertWithinLimit(guess, `Too many wrong codes for this address (${OTP_WRONG_CODES_PER_HOUR} per hour): try again later.`);
  const result = await checkOtp(account.id, input.otp, now, "reset");
  if (result !== "invalid") await guess.refund();
  if (result === "exhausted") {
    const wait = Math.max(1, await secondsUntilNextOtp(input.email, now));
    throw new AppError("rate_limited", "Too many wrong codes: this code no longer works. Ask for a new one.", {
      headers: { "Retry-After": String(wait), "RateLimit-Limit": "5", "RateLimit-Remaining": "0", "RateLimit-Reset": String(wait) },
    });
  }
  if (result === "invalid") throw invalidOtp();
  const passwordHash = await hashPassword(input.newPassword);
  await db.update(accounts).set({ passwordHash, passwordChangedAt: new Date(now), updatedAt: new Date(now) })
    .where(eq(accounts.id, account.id));
  await revokeAllRefreshTokens(account.id, now);
  // Tokens issued at or before the change's millisecond are refused: the new pair is issued one millisecond after it.
  return issueTokenPair(account.id, now + 1);
}
