import { getConfig } from "@/lib/config";

/**
 * `<{idempotency key}@{APP_URL's host}>`: the same on every attempt of one email, so a receiving server or a person
 * can tell a repeated delivery apart. A colon may not stand left of the "@" of a Message-ID (RFC 5322 dot-atom), so
 * the key's colons are written as dots.
 */
export function messageIdFor(idempotencyKey: string): string {
  let host = "localhost";
  try {
    host = new URL(getConfig().appUrl).hostname || host;
  } catch {
    // An APP_URL that does not parse keeps the fallback: the id stays well-formed.
  }
  return `<${idempotencyKey.replace(/[^A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]/g, ".")}@${host}>`;
}
