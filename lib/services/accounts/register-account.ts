import "server-only";
import { eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { accounts } from "@/db/schema";
import { hashPassword } from "@/lib/auth/passwords";
import { now as clockNow } from "@/lib/clock";
import { AppError } from "@/lib/http/errors";
import { newId } from "@/lib/ids";
import { issueOtp } from "./otp";

export type RegisterInput = { email: string; password: string; fullName: string };

/**
 * Creates an unverified account and emails its code. Registering again with an address that was never
 * verified replaces its password and name and sends a new code (the earlier attempt proved nothing, and
 * the mailbox owner must still verify); a verified address is `email_taken`.
 */
export async function registerAccount(input: RegisterInput, now = clockNow()) {
  const db = await getDb();
  const passwordHash = await hashPassword(input.password);
  const [existing] = await db.select().from(accounts).where(eq(accounts.email, input.email));
  if (existing?.emailVerifiedAt) throw emailTaken();
  let account = existing;
  if (existing) {
    [account] = await db.update(accounts).set({ passwordHash, fullName: input.fullName, updatedAt: new Date(now) })
      .where(eq(accounts.id, existing.id)).returning();
  } else {
    [account] = await db.insert(accounts)
      .values({ id: newId("usr"), email: input.email, fullName: input.fullName, passwordHash, createdAt: new Date(now), updatedAt: new Date(now) })
      .onConflictDoNothing({ target: accounts.email }).returning();
    if (!account) throw emailTaken(); // a concurrent registration of the same address won
  }
  await issueOtp(account, now);
  return { message: "Account created: enter the 6-digit code we emailed you.", email: account.email };
}

const emailTaken = () => new AppError("email_taken", "An account with this email address already exists: sign in instead.");
