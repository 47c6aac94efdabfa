import "server-only";
import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { getConfig } from "@/lib/config";

/**
 * One-click unsubscribe tokens (CONTRACT 11): `<payload>.<mac>`, both base64url. The payload binds the account and
 * the normalised address; the MAC (HMAC-SHA256, 128 bits, key derived from AUTH_SECRET) makes it unguessable and
 * unforgeable. Tokens do not expire: an unsubscribe link in an old email must keep working.
 */
let cachedKey: { secret: string; key: Buffer } | undefined;

// Derived once per secret: OUTPUT signs one token per email (100,000 in a large run).
function key(): Buffer {
  const secret = getConfig().authSecret;
  if (cachedKey?.secret !== secret) {
    cachedKey = { secret, key: Buffer.from(hkdfSync("sha256", secret, "flowmail", "unsubscribe-token-v1", 32)) };
  }
  return cachedKey.key;
}

const mac = (payload: string) => createHmac("sha256", key()).update(payload).digest().subarray(0, 16);

export function unsubscribeToken(accountId: string, email: string): string {
  const payload = Buffer.from(`${accountId}\n${email}`, "utf8").toString("base64url");
  return `${payload}.${mac(payload).toString("base64url")}`;
}

/** The account and address of a valid token, or null. */
export function readUnsubscribeToken(token: string): { accountId: string; email: string } | null {
  if (token.length > 1200) return null;
  const [payload, signature, extra] = token.split(".");
  if (!payload || !signature || extra !== undefined) return null;
  // Compared as text: base64url decoding ignores the unused bits of the last character, so two spellings would pass.
  const given = Buffer.from(signature);
  const expected = Buffer.from(mac(payload).toString("base64url"));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const [accountId, email, rest] = Buffer.from(payload, "base64url").toString("utf8").split("\n");
  if (!accountId || !email || rest !== undefined) return null;
  return { accountId, email };
}

/** `appUrl`: the base the run's emails are built with (NodeRuntime.emailIdentity); this instance's APP_URL otherwise. */
export function unsubscribeUrl(accountId: string, email: string, appUrl = getConfig().appUrl): string {
  return `${appUrl.replace(/\/+$/, "")}/api/unsubscribe/${unsubscribeToken(accountId, email)}`;
}
