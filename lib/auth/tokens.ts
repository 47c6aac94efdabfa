import "server-only";
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import { getConfig } from "@/lib/config";
import { AppError } from "@/lib/http/errors";

export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;
export const JWT_ISSUER = "flowmail";
export const JWT_AUDIENCE = "flowmail-api";

function secretKey(): Uint8Array {
  return new TextEncoder().encode(getConfig().authSecret);
}

export async function signAccessToken(accountId: string, now = Date.now()): Promise<string> {
  const iat = Math.floor(now / 1000);
  return new SignJWT({ typ: "access" })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(accountId)
    .setIssuer(JWT_ISSUER)
    .setAudience(JWT_AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ACCESS_TOKEN_TTL_SECONDS)
    .sign(secretKey());
}

export type AccessTokenClaims = { accountId: string; issuedAt: number };

/** Verifies algorithm (HS256 only), issuer, audience, type and expiry. Throws 401 problems. */
export async function verifyAccessToken(token: string, now = Date.now()): Promise<AccessTokenClaims> {
  try {
    const { payload } = await jwtVerify(token, secretKey(), {
      algorithms: ["HS256"],
      issuer: JWT_ISSUER,
      audience: JWT_AUDIENCE,
      currentDate: new Date(now),
      requiredClaims: ["sub", "iat", "exp"],
    });
    if (payload.typ !== "access" || typeof payload.sub !== "string" || typeof payload.iat !== "number") {
      throw new AppError("invalid_token", "The access token is not valid.");
    }
    return { accountId: payload.sub, issuedAt: payload.iat };
  } catch (error) {
    if (error instanceof AppError) throw error;
    if (error instanceof joseErrors.JWTExpired) {
      throw new AppError("token_expired", "The access token has expired: exchange your refresh token at /api/auth/refresh-token.");
    }
    throw new AppError("invalid_token", "The access token is not valid.");
  }
}
