import "server-only";
import { eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { accounts } from "@/db/schema";
import { clientAddress } from "@/lib/auth/client-address";
import { burnPasswordCheck, verifyPassword } from "@/lib/auth/passwords";
import { now as clockNow } from "@/lib/clock";
import { getConfig } from "@/lib/config";
import { AppError } from "@/lib/errors";
import { assertWithinLimit, consumeRateLimit, type RateLimitHit } from "@/lib/rate-limit";
import { issueTokenPair } from "./sessions";

export const LOGIN_FAILURE_LIMIT = 10;
export const LOGIN_FAILURE_WINDOW_SECONDS = 15 * 60;

const failureKey = (email: string) => `login-fail:${email}`;
const addressKey = (address: string) => `login-fail-addr:${address}`;
const invalidCredentials = () => new AppError("invalid_credentials", "The email address or the password is wrong.");

/** Where a sign-in comes from: the request, for the per-client-address throttle (null: unknown, not throttled). */
export type SignInSource = { req?: Request };

/**
 * Checks email and password, throttled per address (10 failures per sliding 15 minutes, then 429 even for the right
 * password) and per client address (LOGIN_ADDRESS_FAILURE_LIMIT failures across all emails, ASVS 6.3.1). Each
 * attempt first takes a slot in both counters (an atomic increment-and-check, so parallel guesses cannot get past the
 * limit) and hands it back when the password was right. An unknown address costs one argon2 verification against a
 * dummy hash, like a wrong password, and answers the same 401. Shared by POST /api/auth/login, the web session and
 * the password change.
 */
export async function checkCredentials(email: string, password: string, now = clockNow(), source: SignInSource = {}) {
  const slots = await takeAttemptSlots(email, source, now);
  const db = await getDb();
  const [account] = await db.select().from(accounts).where(eq(accounts.email, email));
  const valid = account ? await verifyPassword(account.passwordHash, password) : await burnPasswordCheck(password);
  if (!account || !valid) throw invalidCredentials();
  await Promise.all(slots.map((slot) => slot.refund()));
  return account;
}

async function takeAttemptSlots(email: string, source: SignInSource, now: number): Promise<RateLimitHit[]> {
  const perEmail = await consumeRateLimit(failureKey(email), LOGIN_FAILURE_LIMIT, LOGIN_FAILURE_WINDOW_SECONDS, now);
  assertWithinLimit(perEmail, "Too many failed sign-in attempts for this address: try again later.");
  const address = source.req ? clientAddress(source.req) : null;
  if (!address) return [perEmail];
  const perClient = await consumeRateLimit(addressKey(address), getConfig().loginAddressFailureLimit, LOGIN_FAILURE_WINDOW_SECONDS, now);
  if (!perClient.allowed) {
    await perEmail.refund(); // refused before any check: not a failure of this email
    assertWithinLimit(perClient, "Too many failed sign-in attempts from your network: try again later.");
  }
  return [perEmail, perClient];
}

/** Email + password → the verified account (403 `email_not_verified` before the code was entered). */
export async function authenticateWithPassword(email: string, password: string, now = clockNow(), source: SignInSource = {}) {
  const account = await checkCredentials(email, password, now, source);
  if (!account.emailVerifiedAt) {
    throw new AppError("email_not_verified", "Verify your email address first: enter the code we emailed you, or ask for a new one.");
  }
  return account;
}

export async function login(input: { email: string; password: string }, source: SignInSource = {}, now = clockNow()) {
  const account = await authenticateWithPassword(input.email, input.password, now, source);
  return issueTokenPair(account.id, now);
}
