import "server-only";
import { and, eq, gt, isNull, min, sql } from "drizzle-orm";
import { execRows, getDb, type Db, type Tx } from "@/db/client";
import { accounts, refreshTokens } from "@/db/schema";
import { ACCESS_TOKEN_TTL_SECONDS, signAccessToken } from "@/lib/auth/tokens";
import { clockOffsetMs } from "@/lib/clock";
import { getConfig } from "@/lib/config";
import { hashToken, randomToken } from "@/lib/crypto";
import { AppError } from "@/lib/errors";
import { newId } from "@/lib/ids";
import type { TokenPair } from "@/lib/schemas/accounts";

export const REFRESH_TOKEN_TTL_DAYS = 30;
const DAY_MS = 24 * 3600_000;
const REFRESH_TTL_MS = REFRESH_TOKEN_TTL_DAYS * DAY_MS;
/**
 * A rotated token presented again within this many seconds of its rotation is two tabs (or a retried request) racing
 * one refresh, not a leak: it gets a pair of its own in the same family instead of revoking the family.
 */
export const REFRESH_REUSE_GRACE_SECONDS = 5;

type Family = { id: string; startedAt: number };

/**
 * A new access token and a new refresh token. Without `family` a sign-in starts a new one; a rotation continues its
 * family, whose tokens never outlive REFRESH_TOKEN_MAX_DAYS after the original sign-in (30 days sliding within that).
 */
export async function issueTokenPair(accountId: string, now: number, family?: Family, db?: Db | Tx): Promise<TokenPair> {
  const refreshToken = randomToken(32); // 256 random bits
  const { id: familyId, startedAt } = family ?? { id: newId("fam"), startedAt: now };
  const expiresAt = Math.min(now + REFRESH_TTL_MS, startedAt + getConfig().refreshTokenMaxDays * DAY_MS);
  await (db ?? (await getDb())).insert(refreshTokens).values({
    id: newId("rt"), accountId, familyId, tokenHash: hashToken(refreshToken),
    expiresAt: new Date(expiresAt), createdAt: new Date(now),
  });
  return { accessToken: await signAccessToken(accountId, now), refreshToken, expiresIn: ACCESS_TOKEN_TTL_SECONDS, tokenType: "Bearer" };
}

const invalidRefresh = () => new AppError("invalid_token", "The refresh token is not valid: sign in again.");

/**
 * The database's clock, shared by every app instance: the rotation instant and the grace are both read from it, in the
 * statements themselves, so a request that started (on its instance's clock) before the winning rotation but reached
 * the row after it is never seen as arriving before that rotation. Tests move it with the test clock.
 */
const dbNow = () => sql`(clock_timestamp() + ${clockOffsetMs()}::double precision * interval '1 millisecond')`;

/**
 * Exchanges a refresh token for a new pair. The rotation is one conditional UPDATE … WHERE rotated_at IS NULL
 * RETURNING, so of two concurrent refreshes with one token exactly one rotates it. The other (blocked on the row lock
 * until the winner commits) finds it rotated: within REFRESH_REUSE_GRACE_SECONDS of that rotation, by the database's
 * clock, it gets a sibling pair in the same family (both tabs end up signed in); later, a rotated token means it
 * leaked, and its whole family is revoked.
 */
export async function rotateRefreshToken(refreshToken: string, now: number): Promise<TokenPair> {
  const db = await getDb();
  const tokenHash = hashToken(refreshToken);
  const at = new Date(now);
  const pair = await db.transaction(async (tx) => {
    const [rotated] = await tx.update(refreshTokens).set({ rotatedAt: dbNow() })
      .where(and(eq(refreshTokens.tokenHash, tokenHash), isNull(refreshTokens.rotatedAt), isNull(refreshTokens.revokedAt), gt(refreshTokens.expiresAt, at)))
      .returning({ accountId: refreshTokens.accountId, familyId: refreshTokens.familyId });
    if (!rotated) return null;
    return continueFamily(tx, rotated.accountId, rotated.familyId, now);
  });
  if (pair) return pair;
  const [known] = await execRows<{ account_id: string; family_id: string; state: "unrotated" | "grace" | "reused" }>(
    db,
    sql`select account_id, family_id,
          case when rotated_at is null then 'unrotated'
               when revoked_at is null and expires_at > ${dbNow()}
                 and ${dbNow()} - rotated_at <= ${REFRESH_REUSE_GRACE_SECONDS}::double precision * interval '1 second' then 'grace'
               else 'reused' end as state
        from refresh_tokens where token_hash = ${tokenHash}`,
  );
  if (!known || known.state === "unrotated") throw invalidRefresh();
  if (known.state === "grace") {
    const sibling = await db.transaction((tx) => continueFamily(tx, known.account_id, known.family_id, now));
    if (sibling) return sibling;
    throw invalidRefresh();
  }
  await db.update(refreshTokens).set({ revokedAt: dbNow() })
    .where(and(eq(refreshTokens.familyId, known.family_id), isNull(refreshTokens.revokedAt)));
  throw invalidRefresh();
}

/** The next pair of a family, unless the account lost its verification or the family was revoked meanwhile. */
async function continueFamily(tx: Tx, accountId: string, familyId: string, now: number): Promise<TokenPair | null> {
  const [account] = await tx.select({ verifiedAt: accounts.emailVerifiedAt }).from(accounts).where(eq(accounts.id, accountId));
  if (!account?.verifiedAt) return null;
  const [family] = await tx.select({ startedAt: min(refreshTokens.createdAt), revoked: min(refreshTokens.revokedAt) })
    .from(refreshTokens).where(eq(refreshTokens.familyId, familyId));
  if (!family?.startedAt || family.revoked) return null;
  const startedAt = new Date(family.startedAt).getTime();
  if (startedAt + getConfig().refreshTokenMaxDays * DAY_MS <= now) return null;
  return issueTokenPair(accountId, now, { id: familyId, startedAt }, tx);
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
