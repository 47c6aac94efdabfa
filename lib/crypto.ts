import "server-only";
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";
import { getConfig } from "@/lib/config";

// AES-256-GCM for secrets at rest (AI keys, Google refresh tokens, webhook secrets).
// Format: v1.<iv b64url>.<tag b64url>.<ciphertext b64url>

function key(): Buffer {
  return Buffer.from(hkdfSync("sha256", getConfig().encryptionKey, "flowmail", "secrets-at-rest-v1", 32));
}

export function encryptSecret(plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key(), iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return ["v1", iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), ciphertext.toString("base64url")].join(".");
}

export function decryptSecret(payload: string): string {
  const [version, iv, tag, data] = payload.split(".");
  if (version !== "v1" || !iv || !tag || data === undefined) throw new Error("Unknown secret format");
  const decipher = createDecipheriv("aes-256-gcm", key(), Buffer.from(iv, "base64url"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(data, "base64url")), decipher.final()]).toString("utf8");
}

/**
 * For stored lookup tokens (refresh tokens, OTPs with a pepper): HMAC-SHA-256 under a key derived from AUTH_SECRET
 * for this use only (AUTH_SECRET also signs the JWTs). Hashes stored by the earlier sha256(secret‖0‖token) do not
 * verify any more: those refresh tokens and codes were development data; a signed-in user signs in again.
 */
export function hashToken(token: string): string {
  return createHmac("sha256", tokenHashKey()).update(token).digest("base64url");
}

function tokenHashKey(): Buffer {
  return Buffer.from(hkdfSync("sha256", getConfig().authSecret, "flowmail", "token-hash-v1", 32));
}

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}
