import "server-only";
import { createHash, hkdfSync, timingSafeEqual } from "node:crypto";
import { and, eq, gt, isNull, lt } from "drizzle-orm";
import { jwtVerify, SignJWT } from "jose";
import { getDb } from "@/db/client";
import { oauthStates } from "@/db/schema";
import { getConfig } from "@/lib/config";
import { newId } from "@/lib/ids";

// The OAuth `state` is a short-lived HS256 JWT naming one `oauthStates` row. The row holds the account and
// the PKCE verifier and is spent on first use, so a state cannot be forged (signature), reused (used_at),
// or used late (exp and expires_at). Its key is derived from AUTH_SECRET for this purpose only, so a
// state can never pass as an access token or the reverse. It also carries the hash of a nonce that only the browser
// which started the consent holds (a short-lived cookie), so a consent started by one account and finished in another
// person's browser links nothing (RFC 9700 §4.7.1: state bound to the user agent).

export const OAUTH_STATE_TTL_MS = 10 * 60 * 1000;
const ISSUER = "flowmail";
const AUDIENCE = "flowmail:google-oauth-state";

function stateKey(): Uint8Array {
  return new Uint8Array(hkdfSync("sha256", getConfig().authSecret, "flowmail", "google-oauth-state-v1", 32));
}

const nonceHash = (nonce: string) => createHash("sha256").update(`google-oauth-browser:${nonce}`).digest("base64url");

/** Stores a consent attempt and returns its signed state token, bound to the browser holding `browserNonce`. */
export async function createOAuthState(accountId: string, codeVerifier: string, browserNonce: string, now = new Date()): Promise<string> {
  const db = await getDb();
  const id = newId("ost");
  const expiresAt = new Date(now.getTime() + OAUTH_STATE_TTL_MS);
  // Spent and abandoned attempts of this account are useless after their expiry: drop them as we go.
  await db.delete(oauthStates).where(and(eq(oauthStates.accountId, accountId), lt(oauthStates.expiresAt, now)));
  await db.insert(oauthStates).values({ id, accountId, codeVerifier, expiresAt, createdAt: now });
  return new SignJWT({ bnd: nonceHash(browserNonce) })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(id)
    .setIssuedAt(Math.floor(now.getTime() / 1000))
    .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
    .sign(stateKey());
}

export type SpentOAuthState = { accountId: string; codeVerifier: string };

/**
 * Verifies a state token and the browser's nonce, then spends its row atomically: null when the token is missing,
 * forged, expired, already used, its row is gone, or the browser is not the one that started the consent (then the
 * row is left alone: a stranger's browser cannot spend the owner's attempt). Never throws for a bad state — the
 * caller answers every case the same.
 */
export async function consumeOAuthState(token: string | null | undefined, browserNonce: string | null | undefined): Promise<SpentOAuthState | null> {
  if (!token || !browserNonce) return null;
  let stateId: string | undefined;
  try {
    const { payload } = await jwtVerify(token, stateKey(), { issuer: ISSUER, audience: AUDIENCE, algorithms: ["HS256"] });
    if (typeof payload.bnd !== "string" || !sameText(payload.bnd, nonceHash(browserNonce))) return null;
    stateId = payload.sub;
  } catch {
    return null;
  }
  if (!stateId) return null;
  const db = await getDb();
  const now = new Date();
  const [row] = await db
    .update(oauthStates)
    .set({ usedAt: now })
    .where(and(eq(oauthStates.id, stateId), isNull(oauthStates.usedAt), gt(oauthStates.expiresAt, now)))
    .returning({ accountId: oauthStates.accountId, codeVerifier: oauthStates.codeVerifier });
  return row ?? null;
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
