import "server-only";
import { getConfig } from "@/lib/config";
import { disconnectGoogle } from "./links";
import { createOAuthClient } from "./oauth-client";

const REVOKE_TIMEOUT_MS = 5000;

/** Unlinks the account's Google link; revoking at Google is best effort and bounded in time. */
export async function disconnectGoogleAccount(accountId: string): Promise<void> {
  await disconnectGoogle(accountId, async (refreshToken) => {
    if (!getConfig().google.configured) return;
    const client = createOAuthClient();
    await Promise.race([
      client.revokeToken(refreshToken),
      new Promise((_, reject) => setTimeout(() => reject(new Error("revoke timed out")), REVOKE_TIMEOUT_MS).unref()),
    ]);
  });
}
