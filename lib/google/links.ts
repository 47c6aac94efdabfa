import "server-only";
import { and, eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { googleLinks } from "@/db/schema";
import { getConfig } from "@/lib/config";
import { decryptSecret, encryptSecret } from "@/lib/crypto";
import { log } from "@/lib/log";

export type GoogleLink = typeof googleLinks.$inferSelect;

export const LINK_EXPIRED_MESSAGE = "Google account link expired: reconnect it";
export const NOT_CONNECTED_MESSAGE = "Google Drive is not connected: connect it in Settings";

export async function findGoogleLink(accountId: string): Promise<GoogleLink | undefined> {
  const db = await getDb();
  const [link] = await db.select().from(googleLinks).where(eq(googleLinks.accountId, accountId));
  return link;
}

/** For save-time validation of a DATA_SOURCE `{ driveFileId }`: the account has a usable link. */
export async function hasActiveGoogleLink(accountId: string): Promise<boolean> {
  const link = await findGoogleLink(accountId);
  return link?.status === "active";
}

export async function saveGoogleLink(input: {
  accountId: string;
  googleEmail: string;
  scopes: string[];
  refreshToken: string;
}): Promise<void> {
  const db = await getDb();
  const now = new Date();
  const values = {
    googleEmail: input.googleEmail,
    scopes: input.scopes,
    refreshTokenEncrypted: encryptSecret(input.refreshToken),
    status: "active" as const,
    connectedAt: now,
    updatedAt: now,
  };
  await db
    .insert(googleLinks)
    .values({ accountId: input.accountId, ...values })
    .onConflictDoUpdate({ target: googleLinks.accountId, set: values });
}

/** Google refused the refresh token: keep the row (status shows it) but never call Google with it again. */
export async function markGoogleLinkBroken(accountId: string): Promise<void> {
  const db = await getDb();
  await db
    .update(googleLinks)
    .set({ status: "broken", updatedAt: new Date() })
    .where(and(eq(googleLinks.accountId, accountId), eq(googleLinks.status, "active")));
}

/** Google may hand out a new refresh token on refresh; keep the newest one. */
export async function replaceRefreshToken(accountId: string, refreshToken: string): Promise<void> {
  const db = await getDb();
  await db
    .update(googleLinks)
    .set({ refreshTokenEncrypted: encryptSecret(refreshToken), updatedAt: new Date() })
    .where(eq(googleLinks.accountId, accountId));
}

export function linkRefreshToken(link: GoogleLink): string {
  return decryptSecret(link.refreshTokenEncrypted);
}

export type GoogleStatus =
  | { connected: false; configured: false }
  | { connected: false; reason?: "expired"; email?: string }
  | { connected: true; email: string; scopes: string[]; connectedAt: string };

export async function getGoogleStatus(accountId: string): Promise<GoogleStatus> {
  // Not an error: the settings page asks on every visit and simply shows that Google is not set up.
  if (!getConfig().google.configured) return { connected: false, configured: false };
  const link = await findGoogleLink(accountId);
  if (!link) return { connected: false };
  if (link.status === "broken") return { connected: false, reason: "expired", email: link.googleEmail };
  return { connected: true, email: link.googleEmail, scopes: link.scopes, connectedAt: link.connectedAt.toISOString() };
}

/** Deletes the link; revoking the grant at Google is best effort (the row goes either way). */
export async function disconnectGoogle(accountId: string, revoke: (refreshToken: string) => Promise<unknown>): Promise<void> {
  const link = await findGoogleLink(accountId);
  if (!link) return;
  try {
    await revoke(linkRefreshToken(link));
  } catch (error) {
    log.warn("google token revoke failed", { accountId, error });
  }
  const db = await getDb();
  await db.delete(googleLinks).where(eq(googleLinks.accountId, accountId));
}
