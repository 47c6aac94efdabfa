import { getDb } from "@/db/client";
import { accounts } from "@/db/schema";
import { hashPassword } from "@/lib/auth/passwords";
import { signAccessToken } from "@/lib/auth/tokens";
import { newId } from "@/lib/ids";

let counter = 0;

/**
 * A verified account inserted directly, with a valid access token: for tests of other domains.
 * (Registration itself is tested through the real endpoints in the accounts tests.)
 */
export async function createTestAccount(overrides: { email?: string; fullName?: string; password?: string } = {}) {
  const db = await getDb();
  const id = newId("usr");
  const email = overrides.email ?? `user${++counter}-${id.slice(-6).toLowerCase()}@example.com`;
  const fullName = overrides.fullName ?? "Test User";
  await db.insert(accounts).values({
    id,
    email,
    fullName,
    // A real argon2id hash only when the test signs in with a password (hashing costs ~50 ms).
    passwordHash: overrides.password ? await hashPassword(overrides.password) : "not-a-real-hash",
    emailVerifiedAt: new Date(Date.now() - 60_000),
  });
  const token = await signAccessToken(id);
  return { id, email, fullName, token };
}
