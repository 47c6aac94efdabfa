import "server-only";
import { eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { accounts } from "@/db/schema";
import { burnPasswordCheck, verifyPassword } from "@/lib/auth/passwords";
import { now as clockNow } from "@/lib/clock";
import { AppError } from "@/lib/http/errors";
import { assertWithinLimit, consumeRateLimit, peekRateLimit } from "@/lib/rate-limit";
import { issueTokenPair } from "./sessions";

export const LOGIN_FAILURE_LIMIT = 10;
export const LOGIN_FAILURE_WINDOW_SECONDS = 15 * 60;

const failureKey = (email: string) => `login-fail:${email}`;
const invalidCredentials = () => new AppError("invalid_credentials", "The email address or the password is wrong.");

/**
 * Checks email and password, throttled per address (10 failures per 15 minutes, then 429 even for the right
 * password). An unknown address costs one argon2 verification against a dummy hash, like a wrong password,
 * and answers the same 401. Shared by POST /api/auth/login, the web session and the password change.
 */
export async function checkCredentials(email: string, password: string, now = clockNow()) {
  await assertNotThrottled(email, now);
  const db = await getDb();
  const [account] = await db.select().from(accounts).where(eq(accounts.email, email));
  const valid = account ? await verifyPassword(account.passwordHash, password) : await burnPasswordCheck(password);
  if (!account || !valid) {
    await consumeRateLimit(failureKey(email), LOGIN_FAILURE_LIMIT, LOGIN_FAILURE_WINDOW_SECONDS, now);
    throw invalidCredentials();
  }
  return account;
}

async function assertNotThrottled(email: string, now: number): Promise<void> {
  const failures = await peekRateLimit(failureKey(email), LOGIN_FAILURE_WINDOW_SECONDS, now);
  const windowMs = LOGIN_FAILURE_WINDOW_SECONDS * 1000;
  const resetSeconds = Math.max(1, Math.ceil((Math.floor(now / windowMs) * windowMs + windowMs - now) / 1000));
  assertWithinLimit(
    { allowed: failures < LOGIN_FAILURE_LIMIT, limit: LOGIN_FAILURE_LIMIT, remaining: Math.max(0, LOGIN_FAILURE_LIMIT - failures), resetSeconds },
    "Too many failed sign-in attempts for this address: try again later.",
  );
}

/** Email + password → the verified account (403 `email_not_verified` before the code was entered). */
export async function authenticateWithPassword(email: string, password: string, now = clockNow()) {
  const account = await checkCredentials(email, password, now);
  if (!account.emailVerifiedAt) {
    throw new AppError("email_not_verified", "Verify your email address first: enter the code we emailed you, or ask for a new one.");
  }
  return account;
}

export async function login(input: { email: string; password: string }, now = clockNow()) {
  const account = await authenticateWithPassword(input.email, input.password, now);
  return issueTokenPair(account.id, now);
}
