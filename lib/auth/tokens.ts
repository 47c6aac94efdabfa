import "server-only";
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import { getConfig } from "@/lib/config";
import { now as clockNow } from "@/lib/clock";
import { AppError } from "@/lib/http/errors";

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

/** Verifies algorithm (HS256 only), issuer, audience, type and expiry. Throws 401 problems. */
export async function verifyAccessToken(token: string, now = clockNow()): Promise<AccessTokenClaims> {
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
    return { accountId: payload.sub, issuedAt: payload.iat, issuedAtMs };
  } catch (error) {
    if (error instanceof AppError) throw error;
    if (error instanceof joseErrors.JWTExpired) {
      throw new AppError("token_expired", "The access token has expired: exchange your refresh token at /api/auth/refresh-token.");
    }
    throw new AppError("invalid_token", "The access token is not valid.");
  }
}
