import "server-only";
import { eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { accounts } from "@/db/schema";
import { AppError } from "@/lib/http/errors";
import { verifyAccessToken } from "./tokens";

export type AuthenticatedAccount = { id: string; email: string; fullName: string };

/**
 * Resolves the account of a request from a Bearer access token. Throws 401 problems.
 * (The web UI's session cookie is accepted too once the accounts module adds it here.)
 */
export async function authenticate(req: Request): Promise<AuthenticatedAccount> {
  const header = req.headers.get("authorization");
  if (!header) throw new AppError("unauthorized", "Send `Authorization: Bearer <accessToken>`.");
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw new AppError("invalid_token", "The Authorization header must be `Bearer <accessToken>`.");
  const claims = await verifyAccessToken(match[1]);
  return loadAccount(claims.accountId, claims.issuedAt);
}

async function loadAccount(accountId: string, issuedAt: number): Promise<AuthenticatedAccount> {
  const db = await getDb();
  const [account] = await db
    .select({
      id: accounts.id,
      email: accounts.email,
      fullName: accounts.fullName,
      verifiedAt: accounts.emailVerifiedAt,
      passwordChangedAt: accounts.passwordChangedAt,
    })
    .from(accounts)
    .where(eq(accounts.id, accountId));
  if (!account || !account.verifiedAt) throw new AppError("invalid_token", "The access token is not valid.");
  // Tokens issued before the last password change are refused (iat has second precision).
  if (account.passwordChangedAt && issuedAt < Math.floor(account.passwordChangedAt.getTime() / 1000)) {
    throw new AppError("invalid_token", "The access token was revoked: sign in again.");
  }
  return { id: account.id, email: account.email, fullName: account.fullName };
}
