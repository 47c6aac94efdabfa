import "server-only";
import { eq, sql } from "drizzle-orm";
import { getDb } from "@/db/client";
import { accounts } from "@/db/schema";
import { getConfig } from "@/lib/config";
import { AppError } from "@/lib/errors";
import { accountVerified, tokenOpensAccount } from "./account-check";
import { accountForApiKey, isApiKeyToken, type ApiKeyGrant } from "./api-keys";
import { hasSessionCookie, readBrowserSession } from "./session-cookie";
import { verifyAccessToken } from "./tokens";

/** The caller: a person (token or session), or an API key of the account (`apiKey`: what the key may do). */
export type AuthenticatedAccount = { id: string; email: string; fullName: string; apiKey?: ApiKeyGrant };

/**
 * Resolves the account of a request: a Bearer access token or API key (`fmk_…`), or else the web UI's next-auth session cookie.
 * Cookie-authenticated mutations must come from our own origin (a CSRF defence on top of SameSite=Lax).
 * Throws 401 problems (403 `forbidden` for a cross-origin cookie mutation).
 */
export async function authenticate(req: Request): Promise<AuthenticatedAccount> {
  const token = bearerToken(req);
  if (token) return isApiKeyToken(token) ? accountForApiKey(token) : accountForAccessToken(token);
  if (!hasSessionCookie(req)) throw new AppError("unauthorized", "Send `Authorization: Bearer <accessToken>`.");
  const session = await readBrowserSession(req);
  if (!session) throw new AppError("invalid_token", "The session has expired: sign in again.");
  assertSameOrigin(req);
  return loadAccount(session.accountId, session.authTimeMs, "The session was ended by a password change: sign in again.");
}

/** The Bearer token of the request, or null without an Authorization header (throws 401 when it is malformed). */
export function bearerToken(req: Request): string | null {
  const header = req.headers.get("authorization");
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw new AppError("invalid_token", "The Authorization header must be `Bearer <accessToken>`.");
  return match[1];
}

/** A valid access token → its account (also used to start a browser session right after verify-email). */
export async function accountForAccessToken(token: string): Promise<AuthenticatedAccount> {
  const claims = await verifyAccessToken(token);
  return loadAccount(claims.accountId, claims.issuedAtMs, "The access token was revoked: sign in again.");
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

function assertSameOrigin(req: Request): void {
  if (SAFE_METHODS.has(req.method.toUpperCase())) return;
  const origin = req.headers.get("origin");
  if (!origin || !acceptedOrigins(req).some((allowed) => sameOrigin(origin, allowed))) {
    throw new AppError("forbidden", "Requests signed in with the session cookie must come from this site (Origin header).");
  }
}

/**
 * The origins this request may come from: the configured APP_URL, the request URL, and the address the browser
 * actually used — its Host header (a cross-site page cannot set Host to ours while sending its own Origin, so
 * Origin = Host is the classic CSRF check), and behind our own proxy (TRUST_PROXY=true) X-Forwarded-Host/-Proto.
 */
function acceptedOrigins(req: Request): string[] {
  const config = getConfig();
  const url = new URL(req.url);
  const origins = [url.origin, new URL(config.appUrl).origin];
  const host = req.headers.get("host");
  if (host) origins.push(`${url.protocol}//${host}`);
  if (config.trustProxy) {
    const forwardedHost = firstValue(req.headers.get("x-forwarded-host"));
    const forwardedProto = firstValue(req.headers.get("x-forwarded-proto"));
    const protocol = forwardedProto === "https" || forwardedProto === "http" ? `${forwardedProto}:` : url.protocol;
    if (forwardedHost) origins.push(`${protocol}//${forwardedHost}`);
    if (host) origins.push(`${protocol}//${host}`);
  }
  return origins;
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Same scheme, host and port; outside production, localhost, 127.0.0.1 and [::1] count as one host (a dev server
 * reports its URL as localhost whichever address was typed). Malformed origins never match.
 */
function sameOrigin(origin: string, allowed: string): boolean {
  let a: URL, b: URL;
  try {
    a = new URL(origin);
    b = new URL(allowed);
  } catch {
    return false;
  }
  if (a.origin === "null" || a.protocol !== b.protocol || a.port !== b.port) return false;
  if (a.hostname === b.hostname) return true;
  return getConfig().nodeEnv !== "production" && LOOPBACK.has(a.hostname) && LOOPBACK.has(b.hostname);
}

function firstValue(header: string | null): string | undefined {
  const value = header?.split(",")[0]?.trim();
  return value || undefined;
}

const ACCOUNTS = sql.raw('"accounts"');

async function loadAccount(accountId: string, issuedAtMs: number, revokedDetail: string): Promise<AuthenticatedAccount> {
  const db = await getDb();
  const [account] = await db
    .select({
      id: accounts.id,
      email: accounts.email,
      fullName: accounts.fullName,
      opens: sql<boolean>`${tokenOpensAccount(ACCOUNTS, sql`${issuedAtMs}`)}`,
      verified: sql<boolean>`${accountVerified(ACCOUNTS)}`,
    })
    .from(accounts)
    .where(eq(accounts.id, accountId));
  if (account?.opens) return { id: account.id, email: account.email, fullName: account.fullName };
  // Refused: why (an unverified or missing account is "not valid"; else the password changed since).
  throw new AppError("invalid_token", account?.verified ? revokedDetail : "The access token is not valid.");
}
