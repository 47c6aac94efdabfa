import "server-only";
import { sql } from "drizzle-orm";
import { execRows, getDb, type Db } from "@/db/client";
import type { SuppressionReason } from "@/db/schema";

/**
 * Adds addresses (already normalised) to an account's suppression list; an address already there keeps its first
 * reason and date. Returns how many were new.
 */
export async function addSuppressions(accountId: string, emails: string[], reason: SuppressionReason, db?: Db): Promise<{ added: number }> {
  if (emails.length === 0) return { added: 0 };
  const conn = db ?? (await getDb());
  const [row] = await execRows<{ added: number }>(
    conn,
    sql`with ins as (
          insert into suppressions (account_id, email, reason)
          select ${accountId}, e, ${reason} from jsonb_array_elements_text(${JSON.stringify([...new Set(emails)])}::jsonb) as e
          on conflict (account_id, email) do nothing
          returning 1
        ) select count(*)::int as added from ins`,
  );
  return { added: Number(row?.added ?? 0) };
}
