import "server-only";
import { and, eq, gte, lt, sql } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import { emailSends } from "@/db/schema";
import { newId } from "@/lib/ids";
import type { RenderedEmail } from "./render-emails";

type Key = { runId: string; nodeId: string; accountId: string };

/** Records the emails of a batch as pending before the provider call (the unique (run, node, item) key makes it idempotent). */
export async function recordPending(db: Db, key: Key, emails: RenderedEmail[]): Promise<void> {
  if (emails.length === 0) return;
  await db
    .insert(emailSends)
    .values(
      emails.map((e) => ({
        id: newId("eml"),
        runId: key.runId,
        nodeId: key.nodeId,
        itemIndex: e.itemIndex,
        accountId: key.accountId,
        to: e.to,
        subject: e.subject,
        status: "pending" as const,
      })),
    )
    .onConflictDoNothing();
}

/** Item indexes in [from, to) already delivered to the provider by an earlier attempt. */
export async function sentIndexes(db: Db, key: Key, from: number, to: number): Promise<Set<number>> {
  const rows = await db
    .select({ itemIndex: emailSends.itemIndex })
    .from(emailSends)
    .where(
      and(
        eq(emailSends.runId, key.runId),
        eq(emailSends.nodeId, key.nodeId),
        eq(emailSends.status, "sent"),
        gte(emailSends.itemIndex, from),
        lt(emailSends.itemIndex, to),
      ),
    );
  return new Set(rows.map((r) => r.itemIndex));
}

export async function markSent(db: Db, key: Key, sent: { itemIndex: number; providerId: string }[]): Promise<void> {
  if (sent.length === 0) return;
  const values = sql.join(sent.map((s) => sql`(${s.itemIndex}::int, ${s.providerId}::text)`), sql`, `);
  await db.execute(sql`
    update email_sends as e set status = 'sent', sent_at = now(), provider_message_id = v.pid, error = null
    from (values ${values}) as v(idx, pid)
    where e.run_id = ${key.runId} and e.node_id = ${key.nodeId} and e.item_index = v.idx`);
}

export async function markFailed(db: Db, key: Key, itemIndexes: number[], error: string): Promise<void> {
  if (itemIndexes.length === 0) return;
  const list = sql.join(itemIndexes.map((i) => sql`${i}::int`), sql`, `);
  await db.execute(sql`
    update email_sends set status = 'failed', error = ${error}
    where run_id = ${key.runId} and node_id = ${key.nodeId} and status = 'pending' and item_index in (${list})`);
}

export async function countSent(db: Db, runId: string, nodeId: string): Promise<number> {
  const [row] = await execRows<{ n: number }>(
    db,
    sql`select count(*)::int as n from email_sends where run_id = ${runId} and node_id = ${nodeId} and status = 'sent'`,
  );
  return Number(row?.n ?? 0);
}

/**
 * Workflow emails the account sent (or is sending) today (UTC), not counting this node of this run,
 * and how many of this node's emails are already in the ledger.
 */
export async function quotaUsage(db: Db, key: Key): Promise<{ usedToday: number; alreadyRecorded: number }> {
  const [row] = await execRows<{ used: number; mine: number }>(
    db,
    sql`select
          count(*) filter (where not (run_id = ${key.runId} and node_id = ${key.nodeId}))::int as used,
          count(*) filter (where run_id = ${key.runId} and node_id = ${key.nodeId})::int as mine
        from email_sends
        where account_id = ${key.accountId} and status <> 'failed'
          and created_at >= date_trunc('day', now() at time zone 'utc') at time zone 'utc'`,
  );
  return { usedToday: Number(row?.used ?? 0), alreadyRecorded: Number(row?.mine ?? 0) };
}
