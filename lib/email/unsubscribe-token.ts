import "server-only";
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import { getConfig } from "@/lib/config";

/**
 * One-click unsubscribe tokens. A token is `u2.<sealed>`: the account and the normalised address sealed
 * with AES-256-GCM (key derived from AUTH_SECRET), so the link in an email shows neither the account id nor anything
 * else readable, and cannot be forged. The nonce is an HMAC of the content (a synthetic IV): the same account and
 * address always give the same token, and two different contents never share a nonce. Tokens do not expire: an
 * unsubscribe link in an old email must keep working, so the earlier signed form (`<payload>.<mac>`) is still read.
 */
let cachedKeys: { secret: string; legacy: Buffer; seal: Buffer; nonce: Buffer } | undefined;

// Derived once per secret: OUTPUT makes one token per email (100,000 in a large run).
function keys() {
  const secret = getConfig().authSecret;
  if (cachedKeys?.secret !== secret) {
    const derive = (info: string) => Buffer.from(hkdfSync("sha256", secret, "flowmail", info, 32));
    cachedKeys = { secret, legacy: derive("unsubscribe-token-v1"), seal: derive("unsubscribe-token-v2-seal"), nonce: derive("unsubscribe-token-v2-nonce") };
  }
  return cachedKeys;
}

const PREFIX = "u2.";
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export function unsubscribeToken(accountId: string, email: string): string {
  const { seal, nonce: nonceKey } = keys();
  const plain = Buffer.from(`${accountId}\n${email}`, "utf8");
  const nonce = createHmac("sha256", nonceKey).update(plain).digest().subarray(0, NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", seal, nonce);
  const sealed = Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  return `${PREFIX}${sealed.toString("base64url")}`;
}

/** The account and address of a valid token, or null. */
export function readUnsubscribeToken(token: string): { accountId: string; email: string } | null {
  if (token.length > 1200) return null;
  const text = token.startsWith(PREFIX) ? openSealed(token.slice(PREFIX.length)) : openLegacy(token);
  if (text === null) return null;
  const [accountId, email, rest] = text.split("\n");
  if (!accountId || !email || rest !== undefined) return null;
  return { accountId, email };
}

function openSealed(body: string): string | null {
  const sealed = Buffer.from(body, "base64url");
  // Compared as text: base64url decoding ignores the unused bits of the last character, so two spellings would pass.
  if (sealed.length <= NONCE_BYTES + TAG_BYTES || sealed.toString("base64url") !== body) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", keys().seal, sealed.subarray(0, NONCE_BYTES));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    return Buffer.concat([decipher.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES)), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}

/** The earlier form, `<base64url payload>.<base64url HMAC>`, found in emails sent before tokens were sealed. */
function openLegacy(token: string): string | null {
  const [payload, signature, extra] = token.split(".");
  if (!payload || !signature || extra !== undefined) return null;
  const given = Buffer.from(signature);
  const expected = Buffer.from(createHmac("sha256", keys().legacy).update(payload).digest().subarray(0, 16).toString("base64url"));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  return Buffer.from(payload, "base64url").toString("utf8");
}

/** `appUrl`: the base the run's emails are built with (NodeRuntime.emailIdentity); this instance's APP_URL otherwise. */
export function unsubscribeUrl(accountId: string, email: string, appUrl = getConfig().appUrl): string {
  return `${appUrl.replace(/\/+$/, "")}/api/unsubscribe/${unsubscribeToken(accountId, email)}`;
}
