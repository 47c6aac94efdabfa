import "server-only";
import { AppError } from "@/lib/errors";
import { addSuppressions } from "./add-suppressions";
import { readUnsubscribeToken } from "@/lib/email/unsubscribe-token";

/**
 * RFC 8058 one-click unsubscribe: a valid token suppresses its address for its account as `unsubscribed`. Repeating
 * it changes nothing and answers the same. An account that no longer exists has nothing to suppress: same answer.
 */
export async function unsubscribe(token: string): Promise<{ email: string }> {
  const claims = checkUnsubscribeToken(token);
  try {
    await addSuppressions(claims.accountId, [claims.email], "unsubscribed");
  } catch (error) {
    // A deleted account (foreign key): nothing will be sent to the address any more anyway.
    if ((error as { code?: string })?.code !== "23503" && (error as { cause?: { code?: string } })?.cause?.code !== "23503") throw error;
  }
  return { email: claims.email };
}

export function checkUnsubscribeToken(token: string): { accountId: string; email: string } {
  const claims = readUnsubscribeToken(token);
  if (!claims) throw new AppError("bad_request", "This unsubscribe link is not valid: copy the whole link from the email.");
  return claims;
}
