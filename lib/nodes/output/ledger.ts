import "server-only";
import { sql } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import { newId } from "@/lib/ids";

type Key = { runId: string; nodeId: string; accountId: string };

type Recipient = { itemIndex: number; to: string; subject: string };

/**
 * Records every email of the node as pending before any provider call (the unique (run, node, item) key makes it
 * idempotent, so a resumed node records nothing twice). A few large statements with one JSON parameter each:
 * far cheaper than one insert per batch, above all on PGlite.
 */
export async function recordAllPending(db: Db, key: Key, emails: Recipient[]): Promise<void> {
  for (let start = 0; start < emails.length; start += 5000) {
    const rows = JSON.stringify(
      emails.slice(start, start + 5000).map((e) => ({ id: newId("eml"), item_index: e.itemIndex, to: e.to, subject: e.subject })),
    );
    await db.execute(sql`
      insert into email_sends (id, run_id, node_id, item_index, account_id, "to", subject, status)
      select x.id, ${key.runId}, ${key.nodeId}, x.item_index, ${key.accountId}, x."to", x.subject, 'pending'
      from jsonb_to_recordset(${rows}::jsonb) as x(id text, item_index int, "to" text, subject text)
      on conflict (run_id, node_id, item_index) do nothing`);
  }
}

/** Item indexes in [from, to) that an earlier attempt already delivered. */
export async function sentIndexes(db: Db, key: Key, from: number, to: number): Promise<Set<number>> {
  const rows = await execRows<{ item_index: number }>(
    db,
    sql`select item_index from email_sends
        where run_id = ${key.runId} and node_id = ${key.nodeId} and status = 'sent' and item_index >= ${from} and item_index < ${to}`,
  );
  return new Set(rows.map((r) => Number(r.item_index)));
}

export async function markSent(db: Db, key: Key, sent: { itemIndex: number; providerId: string }[]): Promise<void> {
  if (sent.length === 0) return;
  const rows = JSON.stringify(sent.map((s) => ({ idx: s.itemIndex, pid: s.providerId })));
  await db.execute(sql`
    update email_sends as e set status = 'sent', sent_at = now(), provider_message_id = v.pid, error = null
    from jsonb_to_recordset(${rows}::jsonb) as v(idx int, pid text)
    where e.run_id = ${key.runId} and e.node_id = ${key.nodeId} and e.item_index = v.idx`);
}

/** After a node failure: its unsent emails will never be sent, so they stop counting against the daily quota. */
export async function markUnsentFailed(db: Db, key: Key, error: string): Promise<void> {
  await db.execute(sql`
    update email_sends set status = 'failed', error = ${error}
    where run_id = ${key.runId} and node_id = ${key.nodeId} and status = 'pending'`);
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
