import { randomBytes } from "node:crypto";

export type IdPrefix = "usr" | "wf" | "run" | "upl" | "whk" | "otp" | "rt" | "fam" | "msg" | "eml" | "dlv" | "ost" | "hook";

/** Opaque, unguessable ids: a kind prefix and 128 random bits in base64url (never sequential). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(16).toString("base64url")}`;
}

const ID_PATTERN = /^[a-z]{2,4}_[A-Za-z0-9_-]{22}$/;

/** A cheap shape check before touching the database with a path parameter. */
export function looksLikeId(prefix: IdPrefix, value: string): boolean {
  return value.startsWith(`${prefix}_`) && ID_PATTERN.test(value);
}
