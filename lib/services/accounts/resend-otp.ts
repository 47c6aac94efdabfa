import "server-only";
import { eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { accounts } from "@/db/schema";
import { now as clockNow } from "@/lib/clock";
import { issueOtp } from "./otp";
import { reserveOtpSend } from "./otp-throttle";

export const RESEND_OTP_MESSAGE = "If an unverified account uses this address, a new code is on its way.";

/**
 * Emails a new code to an unverified account. Unknown and verified addresses get the same answer and
 * go through the same throttle, so the endpoint reveals nothing about which addresses have accounts.
 */
export async function resendOtp(email: string, now = clockNow()) {
  const db = await getDb();
  const [account] = await db.select().from(accounts).where(eq(accounts.email, email));
  if (account && !account.emailVerifiedAt) await issueOtp(account, now);
  else await reserveOtpSend(email, now);
  return { message: RESEND_OTP_MESSAGE };
}
