import "server-only";
import { CodeChallengeMethod } from "google-auth-library";
import { decodeJwt } from "jose";
import { authenticate } from "@/lib/auth/authenticate";
import { parseCookies } from "@/lib/auth/session-cookie";
import { getConfig } from "@/lib/config";
import { randomToken } from "@/lib/crypto";
import { log } from "@/lib/log";
import { saveGoogleLink } from "./links";
import { assertGoogleConfigured, createOAuthClient, DRIVE_SCOPE, GOOGLE_SCOPES, googleRedirectUri } from "./oauth-client";
import { consumeOAuthState, createOAuthState, OAUTH_STATE_TTL_MS } from "./oauth-state";

export const CONNECTED_REDIRECT = "/settings?google=connected";
export const ERROR_REDIRECT = "/settings?google=error";

/** The browser-binding cookie: sent back only to the callback, gone after the state's 10 minutes. */
export const BROWSER_BINDING_COOKIE = "flowmail_google_oauth";
const CALLBACK_PATH = "/api/integrations/google/callback";

function bindingCookie(value: string, maxAgeSeconds: number): string {
  const secure = getConfig().appUrl.startsWith("https:") ? "; Secure" : "";
  // SameSite=Lax: Google's redirect back is a top-level GET navigation, which carries Lax cookies.
  return `${BROWSER_BINDING_COOKIE}=${value}; Path=${CALLBACK_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure}`;
}

/** Clears the binding cookie (the callback answers with it, whatever the outcome). */
export const clearedBindingCookie = () => bindingCookie("", 0);

/**
 * The Google consent address for this account (offline access, forced consent so a refresh token comes back,
 * PKCE S256) and the cookie that binds the attempt to this browser: only the browser that started it can finish it.
 */
export async function startGoogleConnect(accountId: string): Promise<{ location: string; cookie: string }> {
  assertGoogleConfigured();
  const client = createOAuthClient();
  const { codeVerifier, codeChallenge } = await client.generateCodeVerifierAsync();
  const nonce = randomToken(32);
  const state = await createOAuthState(accountId, codeVerifier, nonce);
  const location = client.generateAuthUrl({
    access_type: "offline",
    prompt: "consent",
    scope: [...GOOGLE_SCOPES],
    state,
    code_challenge: codeChallenge,
    code_challenge_method: CodeChallengeMethod.S256,
    redirect_uri: googleRedirectUri(),
  });
  return { location, cookie: bindingCookie(nonce, Math.floor(OAUTH_STATE_TTL_MS / 1000)) };
}

type CallbackInput = { code: string | null; state: string | null; error: string | null; req: Request };

/**
 * Finishes the consent: returns where to send the browser. Every failure (bad, expired, replayed or foreign
 * state, another browser than the one that started it, consent refused, exchange failed, scope missing) goes to the
 * same error page and stores nothing.
 */
export async function completeGoogleConnect(input: CallbackInput): Promise<string> {
  if (!getConfig().google.configured) return ERROR_REDIRECT;
  // The state is spent even when Google reports an error, so a refused consent cannot be replayed later.
  const browserNonce = parseCookies(input.req.headers.get("cookie") ?? "").get(BROWSER_BINDING_COOKIE);
  const spent = await consumeOAuthState(input.state, browserNonce);
  if (!spent || input.error || !input.code) return ERROR_REDIRECT;
  if (await signedInAsSomeoneElse(input.req, spent.accountId)) return ERROR_REDIRECT;
  try {
    const client = createOAuthClient();
    const { tokens } = await client.getToken({
      code: input.code,
      codeVerifier: spent.codeVerifier,
      redirect_uri: googleRedirectUri(),
    });
    const email = emailFromIdToken(tokens.id_token);
    const scopes = (tokens.scope ?? "").split(/\s+/).filter(Boolean);
    if (!tokens.refresh_token || !email || !scopes.includes(DRIVE_SCOPE)) {
      log.warn("google consent incomplete", {
        accountId: spent.accountId,
        refreshToken: Boolean(tokens.refresh_token),
        email: Boolean(email),
        scopes,
      });
      return ERROR_REDIRECT;
    }
    await saveGoogleLink({ accountId: spent.accountId, googleEmail: email, scopes, refreshToken: tokens.refresh_token });
    return CONNECTED_REDIRECT;
  } catch (error) {
    log.warn("google code exchange failed", { accountId: spent.accountId, error });
    return ERROR_REDIRECT;
  }
}

/**
 * The id_token came straight from the token endpoint over TLS in answer to our own authenticated request,
 * so its claims are trusted without a signature check (OpenID Connect Core 3.1.3.7); the audience is still checked.
 */
function emailFromIdToken(idToken: string | null | undefined): string | null {
  if (!idToken) return null;
  try {
    const claims = decodeJwt(idToken);
    const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (!audiences.includes(getConfig().google.clientId)) return null;
    return typeof claims.email === "string" && claims.email.includes("@") ? claims.email.toLowerCase() : null;
  } catch {
    return null;
  }
}

/**
 * The callback needs no sign-in (the state names the account), but when the browser IS signed in as a
 * different account, the link would land somewhere the person does not expect: refuse it.
 */
async function signedInAsSomeoneElse(req: Request, accountId: string): Promise<boolean> {
  if (!req.headers.get("authorization") && !req.headers.get("cookie")) return false;
  try {
    const account = await authenticate(req);
    return account.id !== accountId;
  } catch {
    return false;
  }
}
