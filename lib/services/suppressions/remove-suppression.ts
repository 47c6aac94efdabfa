import "server-only";
import { and, eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { suppressions } from "@/db/schema";
import { notFound } from "@/lib/errors";
import { normalizeEmail } from "@/lib/schemas/email-address";

/** Takes an address off the list: its workflow emails are sent again. */
export async function removeSuppression(accountId: string, email: string): Promise<void> {
  // A client may percent-encode the address in the path (a%40example.com); a real address never holds "%".
  if (email.includes("%")) {
    try {
      email = decodeURIComponent(email);
    } catch {
      throw notFound("Suppressed address");
    }
  }
  const db = await getDb();
  const removed = await db.delete(suppressions)
    .where(and(eq(suppressions.accountId, accountId), eq(suppressions.email, normalizeEmail(email))))
    .returning({ email: suppressions.email });
  if (removed.length === 0) throw notFound("Suppressed address");
}
