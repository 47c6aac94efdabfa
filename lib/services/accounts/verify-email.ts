import "server-only";
import { and, eq, isNull } from "drizzle-orm";
import { getDb } from "@/db/client";
import { accounts } from "@/db/schema";
import { now as clockNow } from "@/lib/clock";
import { AppError } from "@/lib/http/errors";
import { checkOtp } from "./otp";
import { secondsUntilNextOtp } from "./otp-throttle";
import { issueTokenPair } from "./sessions";

const invalidOtp = () => new AppError("invalid_otp", "The code is wrong or has expired: check the latest email or ask for a new code.");

/** Verifies the emailed code, marks the address verified and signs the person in (first token pair). */
export async function verifyEmail(input: { email: string; otp: string }, now = clockNow()) {
  const db = await getDb();
  const [account] = await db.select({ id: accounts.id, verifiedAt: accounts.emailVerifiedAt }).from(accounts)
    .where(eq(accounts.email, input.email));
  if (!account) throw invalidOtp();
  if (account.verifiedAt) throw new AppError("already_verified", "This email address is already verified: sign in instead.");
  const result = await checkOtp(account.id, input.otp, now);
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
