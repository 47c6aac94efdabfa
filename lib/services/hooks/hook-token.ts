import "server-only";
import { createHash, randomBytes } from "node:crypto";

/** The secret of a hook URL: 256 random bits (the contract asks for at least 128), base64url, with a readable prefix. */
export function newHookToken(): string {
  return `fmh_${randomBytes(32).toString("base64url")}`;
}

/** Only this is stored: a database leak does not hand out working hook URLs. SHA-256 suffices for 256-bit secrets. */
export function hashHookToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** A cheap shape check before touching the database: anything else is an unknown hook. */
export function looksLikeHookToken(token: string): boolean {
  return /^fmh_[A-Za-z0-9_-]{43}$/.test(token);
}
