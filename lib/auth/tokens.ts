import "server-only";
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import { getConfig } from "@/lib/config";
import { now as clockNow } from "@/lib/clock";
import { AppError } from "@/lib/errors";

export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;
export const JWT_ISSUER = "flowmail";
export const JWT_AUDIENCE = "flowmail-api";

let cachedKey: { secret: string; key: Promise<CryptoKey> } | undefined;

/**
 * The HS256 key, imported into WebCrypto once per secret: given raw bytes, jose imports a key on every sign and
 * verify, a measurable share of CPU on the hot authenticated paths.
 */
function secretKey(): Promise<CryptoKey> {
  const secret = getConfig().authSecret;
  if (cachedKey?.secret !== secret) {
    const key = crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
    cachedKey = { secret, key };
  }
  return cachedKey.key;
}

/**
 * `iat` has second precision, so the token also carries `iat_ms`: a password change refuses exactly the
 * tokens issued before it, even within the same second.
 */
export async function signAccessToken(accountId: string, now = clockNow()): Promise<string> {
  const iat = Math.floor(now / 1000);
  return new SignJWT({ typ: "access", iat_ms: now })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(accountId)
    .setIssuer(JWT_ISSUER)
    .setAudience(JWT_AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ACCESS_TOKEN_TTL_SECONDS)
    .sign(await secretKey());
}

/** `issuedAt` in seconds (the JWT `iat`); `issuedAtMs` in milliseconds. */
export type AccessTokenClaims = { accountId: string; issuedAt: number; issuedAtMs: number };

/**
 * Tokens whose signature and claims were already verified, until their `exp`: the HMAC check through WebCrypto
 * costs ~0.5 ms of CPU per request on a busy server, and a token's claims never change. Only successes are kept,
 * per secret; expiry is re-checked on every use exactly as jose checks it (valid while `exp` > now in seconds).
 * Revocation is not decided here: `authenticate` checks the account on every request.
 */
const verifiedTokens = new Map<string, { secret: string; exp: number; claims: AccessTokenClaims }>();
const VERIFIED_TOKENS_MAX = 10_000;

/** Verifies algorithm (HS256 only), issuer, audience, type and expiry. Throws 401 problems. */
export async function verifyAccessToken(token: string, now = clockNow()): Promise<AccessTokenClaims> {
  const secret = getConfig().authSecret;
  const known = verifiedTokens.get(token);
  if (known && known.secret === secret && known.exp > Math.floor(now / 1000)) return known.claims;
  const { claims, exp } = await verifyAccessTokenSignature(token, now);
  if (verifiedTokens.size >= VERIFIED_TOKENS_MAX) verifiedTokens.clear();
  verifiedTokens.set(token, { secret, exp, claims });
  return claims;
}

async function verifyAccessTokenSignature(token: string, now: number): Promise<{ claims: AccessTokenClaims; exp: number }> {
  try {
    const { payload } = await jwtVerify(token, await secretKey(), {
      algorithms: ["HS256"],
      issuer: JWT_ISSUER,
      audience: JWT_AUDIENCE,
      currentDate: new Date(now),
      requiredClaims: ["sub", "iat", "exp"],
    });
    if (payload.typ !== "access" || typeof payload.sub !== "string" || typeof payload.iat !== "number") {
      throw new AppError("invalid_token", "The access token is not valid.");
    }
    // A token without iat_ms (none are issued any more) counts from the start of its second.
    const issuedAtMs = typeof payload.iat_ms === "number" && Math.floor(payload.iat_ms / 1000) === payload.iat
      ? payload.iat_ms
      : payload.iat * 1000;
    return { claims: { accountId: payload.sub, issuedAt: payload.iat, issuedAtMs }, exp: payload.exp as number };
  } catch (error) {
    if (error instanceof AppError) throw error;
    if (error instanceof joseErrors.JWTExpired) {
      throw new AppError("token_expired", "The access token has expired: exchange your refresh token at /api/auth/refresh-token.");
    }
    throw new AppError("invalid_token", "The access token is not valid.");
  }
}
