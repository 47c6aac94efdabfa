import "server-only";
import { decode } from "next-auth/jwt";
import { getConfig } from "@/lib/config";

// next-auth's session cookie (JWT strategy): an encrypted JWT under one of these names, split into
// `name.0`, `name.1`, … when large. The cookie name is also the key-derivation salt.
const SESSION_COOKIE_NAMES = ["__Secure-authjs.session-token", "authjs.session-token"] as const;

export type BrowserSession = { accountId: string; authTimeMs: number };

export function parseCookies(header: string): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    const raw = part.slice(eq + 1).trim();
    try {
      cookies.set(name, decodeURIComponent(raw));
    } catch {
      cookies.set(name, raw);
    }
  }
  return cookies;
}

function cookieValue(cookies: Map<string, string>, name: string): string | undefined {
  if (cookies.has(name)) return cookies.get(name);
  const chunks: string[] = [];
  for (let i = 0; cookies.has(`${name}.${i}`); i++) chunks.push(cookies.get(`${name}.${i}`)!);
  return chunks.length ? chunks.join("") : undefined;
}

/** Whether the request carries a session cookie at all (valid or not). */
export function hasSessionCookie(req: Request): boolean {
  const cookies = parseCookies(req.headers.get("cookie") ?? "");
  return SESSION_COOKIE_NAMES.some((name) => cookieValue(cookies, name) !== undefined);
}

/**
 * Decodes the browser session without Next's request context (so it works in any handler and in tests).
 * Null when there is no cookie or it does not decode (wrong key, expired, tampered).
 */
export async function readBrowserSession(req: Request): Promise<BrowserSession | null> {
  const cookies = parseCookies(req.headers.get("cookie") ?? "");
  for (const name of SESSION_COOKIE_NAMES) {
    const token = cookieValue(cookies, name);
    if (!token) continue;
    const payload = await decode({ token, secret: getConfig().authSecret, salt: name }).catch(() => null);
    if (!payload || typeof payload.sub !== "string") continue;
    const authTimeMs = typeof payload.authTime === "number" ? payload.authTime : typeof payload.iat === "number" ? payload.iat * 1000 : 0;
    return { accountId: payload.sub, authTimeMs };
  }
  return null;
}
