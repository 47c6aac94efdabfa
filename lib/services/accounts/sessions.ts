import "server-only";
import { and, eq, gt, isNull } from "drizzle-orm";
import { getDb, type Db, type Tx } from "@/db/client";
import { accounts, refreshTokens } from "@/db/schema";
import { ACCESS_TOKEN_TTL_SECONDS, signAccessToken } from "@/lib/auth/tokens";
import { hashToken, randomToken } from "@/lib/crypto";
import { AppError } from "@/lib/http/errors";
import { newId } from "@/lib/ids";
import type { TokenPair } from "@/lib/schemas/accounts";

export const REFRESH_TOKEN_TTL_DAYS = 30;
const REFRESH_TTL_MS = REFRESH_TOKEN_TTL_DAYS * 24 * 3600_000;

/** A new access token and a new refresh token; `familyId` continues a login's family, else a new one starts. */
export async function issueTokenPair(accountId: string, now: number, familyId = newId("fam"), db?: Db | Tx): Promise<TokenPair> {
  const refreshToken = randomToken(32); // 256 random bits
  await (db ?? (await getDb())).insert(refreshTokens).values({
    id: newId("rt"), accountId, familyId, tokenHash: hashToken(refreshToken),
    expiresAt: new Date(now + REFRESH_TTL_MS), createdAt: new Date(now),
  });
  return { accessToken: await signAccessToken(accountId, now), refreshToken, expiresIn: ACCESS_TOKEN_TTL_SECONDS, tokenType: "Bearer" };
}

const invalidRefresh = () => new AppError("invalid_token", "The refresh token is not valid: sign in again.");

/**
 * Exchanges a refresh token for a new pair. The rotation is one conditional UPDATE … WHERE rotated_at IS NULL
 * RETURNING, so of two concurrent refreshes with one token exactly one wins. Presenting a token that was
 * already rotated means it leaked (or a client raced itself): its whole family is revoked. The rotation and
 * the new token are one transaction, so a racing loser (blocked on the row lock until the winner commits)
 * revokes the winner's new token too: the family ends either way.
 */
export async function rotateRefreshToken(refreshToken: string, now: number): Promise<TokenPair> {
  const db = await getDb();
  const tokenHash = hashToken(refreshToken);
  const at = new Date(now);
  const pair = await db.transaction(async (tx) => {
    const [rotated] = await tx.update(refreshTokens).set({ rotatedAt: at })
      .where(and(eq(refreshTokens.tokenHash, tokenHash), isNull(refreshTokens.rotatedAt), isNull(refreshTokens.revokedAt), gt(refreshTokens.expiresAt, at)))
      .returning({ accountId: refreshTokens.accountId, familyId: refreshTokens.familyId });
    if (!rotated) return null;
    const [account] = await tx.select({ verifiedAt: accounts.emailVerifiedAt }).from(accounts).where(eq(accounts.id, rotated.accountId));
    if (!account?.verifiedAt) return null;
    return issueTokenPair(rotated.accountId, now, rotated.familyId, tx);
  });
  if (pair) return pair;
  const [known] = await db.select({ familyId: refreshTokens.familyId, rotatedAt: refreshTokens.rotatedAt })
    .from(refreshTokens).where(eq(refreshTokens.tokenHash, tokenHash));
  if (known?.rotatedAt) await revokeFamily(known.familyId, now);
  throw invalidRefresh();
}

export async function revokeFamily(familyId: string, now: number): Promise<void> {
  const db = await getDb();
  await db.update(refreshTokens).set({ revokedAt: new Date(now) })
    .where(and(eq(refreshTokens.familyId, familyId), isNull(refreshTokens.revokedAt)));
}

/** Logout: revokes the family of the given token; an unknown token is not an error (nothing to revoke). */
export async function revokeRefreshTokenFamily(refreshToken: string, now: number): Promise<void> {
  const db = await getDb();
  const [known] = await db.select({ familyId: refreshTokens.familyId }).from(refreshTokens)
    .where(eq(refreshTokens.tokenHash, hashToken(refreshToken)));
  if (known) await revokeFamily(known.familyId, now);
}

export async function revokeAllRefreshTokens(accountId: string, now: number): Promise<void> {
  const db = await getDb();
  await db.update(refreshTokens).set({ revokedAt: new Date(now) })
    .where(and(eq(refreshTokens.accountId, accountId), isNull(refreshTokens.revokedAt)));
}
