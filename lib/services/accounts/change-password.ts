import "server-only";
import { eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { accounts } from "@/db/schema";
import { assertStrongPassword } from "@/lib/auth/password-strength";
import { hashPassword } from "@/lib/auth/passwords";
import { now as clockNow } from "@/lib/clock";
import { checkCredentials } from "./login";
import { revokeAllRefreshTokens } from "./sessions";

/**
 * Replaces the password after checking the current one (same throttle as sign-in, so this cannot be used
 * to guess it). Every refresh token is revoked, and `passwordChangedAt` makes authenticate() refuse every
 * access token and browser session issued up to this instant.
 */
export async function changePassword(account: { id: string; email: string }, input: { currentPassword: string; newPassword: string }, now = clockNow()) {
  await checkCredentials(account.email, input.currentPassword, now);
  await assertStrongPassword(input.newPassword, [account.email], "newPassword");
  const passwordHash = await hashPassword(input.newPassword);
  const db = await getDb();
  await db.update(accounts).set({ passwordHash, passwordChangedAt: new Date(now), updatedAt: new Date(now) })
    .where(eq(accounts.id, account.id));
  await revokeAllRefreshTokens(account.id, now);
}
