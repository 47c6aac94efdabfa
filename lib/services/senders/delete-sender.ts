import "server-only";
import { sql } from "drizzle-orm";
import { execRows, getDb } from "@/db/client";
import { AppError } from "@/lib/errors";
import { findSenderRow } from "./find-sender";

/**
 * Deletes a sender unless an OUTPUT node of one of the account's workflows names it (409 sender_in_use, naming those
 * workflows): the node would otherwise fail at its next run. Deleting the default leaves the account without one
 * (its nodes without a sender then use the deployment's transport).
 */
export async function deleteSender(accountId: string, senderId: string): Promise<void> {
  await findSenderRow(accountId, senderId);
  const db = await getDb();
  const using = await execRows<{ id: string; name: string }>(
    db,
    sql`select w.id, w.name from workflows w
        where w.account_id = ${accountId} and w.deleted_at is null
          and exists (select 1 from jsonb_array_elements(case when jsonb_typeof(w.graph->'nodes') = 'array' then w.graph->'nodes' else '[]'::jsonb end) n
                      where n->>'type' = 'OUTPUT' and n->'data'->>'senderId' = ${senderId})
        order by w.name limit 20`,
  );
  if (using.length > 0) {
    const names = using.map((w) => `"${w.name}"`).join(", ");
    throw new AppError("sender_in_use", `The sender is used by the OUTPUT nodes of ${using.length === 1 ? "workflow" : "workflows"} ${names}: choose another sender there first.`, {
      extensions: { workflows: using.map((w) => ({ id: w.id, name: w.name })) },
    });
  }
  await db.execute(sql`delete from senders where id = ${senderId} and account_id = ${accountId}`);
}
