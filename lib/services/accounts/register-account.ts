import "server-only";
import { getDb } from "@/db/client";
import { accounts } from "@/db/schema";
import { assertStrongPassword } from "@/lib/auth/password-strength";
import { hashPassword } from "@/lib/auth/passwords";
import { now as clockNow } from "@/lib/clock";
import { AppError } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { issueOtp } from "./otp";
import { takeRegistrationSlot } from "./registration-throttle";

export type RegisterInput = { email: string; password: string; fullName: string };

/**
 * Creates an unverified account and emails its code. An address that already has an account, verified or not, is
 * `email_taken` and nothing changes: replacing an unverified account's password would let a stranger set
 * the password its owner then verifies. The owner of an unverified account asks for a new code with resend-otp.
 */
export async function registerAccount(input: RegisterInput, source: { req?: Request } = {}, now = clockNow()) {
  await assertStrongPassword(input.password, [input.email, input.fullName]);
  await takeRegistrationSlot(source.req, now);
  const db = await getDb();
  const passwordHash = await hashPassword(input.password);
  const [account] = await db.insert(accounts)
    .values({ id: newId("usr"), email: input.email, fullName: input.fullName, passwordHash, createdAt: new Date(now), updatedAt: new Date(now) })
    .onConflictDoNothing({ target: accounts.email }).returning();
  if (!account) throw emailTaken();
  await issueOtp(account, now);
  return { message: "Account created: enter the 6-digit code we emailed you.", email: account.email };
}

const emailTaken = () =>
  new AppError(
    "email_taken",
    "An account with this email address already exists: sign in, or if it was never verified, ask for a new code (resend-otp).",
  );
