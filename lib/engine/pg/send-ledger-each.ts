import "server-only";
import { sql } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import type { LedgerKey } from "@/lib/ledgers/types";

// The send ledger of transports without an idempotency key (SMTP, SES): each email is recorded `sending` before its
// call, so a resume can tell the emails whose fate is unknown from those never sent.

/**
 * `item_index` among `indexes`, bounded by their range: without the bounds the planner (PGlite never analyzes; on
 * PostgreSQL the node's rows are newer than the statistics) joins the list against every row of the node — 5,000
 * rows, ~20–30 ms a statement — where the bounds make it an index scan of the group's few rows (~1 ms).
 */
const items = (indexes: number[]) =>
  sql`${within(indexes)} and item_index in (select jsonb_array_elements_text(${JSON.stringify(indexes)}::jsonb)::int)`;

/** `item_index` between the smallest and the largest of `indexes`: the bounds of the index scan. */
const within = (indexes: number[]) => sql`item_index >= ${Math.min(...indexes)} and item_index <= ${Math.max(...indexes)}`;

/** Marks the pending rows among `indexes` `sending`; answers those (only they may go: another may have taken the rest). */
export async function beginSendingEach(db: Db, key: LedgerKey, indexes: number[]): Promise<number[]> {
  if (indexes.length === 0) return [];
  const rows = await execRows<{ item_index: number }>(
    db,
    sql`update email_sends set status = 'sending'
        where run_id = ${key.chainRunId} and node_id = ${key.nodeId} and ${items(indexes)} and status = 'pending'
        returning item_index`,
  );
  return rows.map((r) => Number(r.item_index));
}

/** Emails refused for good by the provider: `failed` with its sentence; rows whose call never went: back to pending. */
export async function settleEach(db: Db, key: LedgerKey, refused: { itemIndex: number; error: string }[], unsent: number[]): Promise<void> {
  if (refused.length > 0) {
    await db.execute(sql`
      update email_sends e set status = 'failed', error = v.error
      from jsonb_to_recordset(${JSON.stringify(refused.map((r) => ({ idx: r.itemIndex, error: r.error })))}::jsonb) as v(idx int, error text)
      where e.run_id = ${key.chainRunId} and e.node_id = ${key.nodeId} and ${within(refused.map((r) => r.itemIndex))}
        and e.item_index = v.idx and e.status = 'sending'`);
  }
  if (unsent.length > 0) {
    await db.execute(sql`
      update email_sends set status = 'pending'
      where run_id = ${key.chainRunId} and node_id = ${key.nodeId} and ${items(unsent)} and status = 'sending'`);
  }
}

/**
 * Rows of items [from, to) still `sending` when their batch starts: an earlier attempt (a crash, a takeover) stopped
 * while their calls were under way. They become `unknown` and are not sent again. Answers how many.
 */
export async function settleUnknown(db: Db, key: LedgerKey, from: number, to: number): Promise<number> {
  const rows = await execRows<{ n: number }>(
    db,
    sql`with u as (
          update email_sends set status = 'unknown', error = 'The call to the provider was under way when the run stopped: it may or may not have been delivered.'
          where run_id = ${key.chainRunId} and node_id = ${key.nodeId} and item_index >= ${from} and item_index < ${to} and status = 'sending'
          returning 1
        ) select count(*)::int as n from u`,
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * Takes `n` emails of a limiter key's daily quota (UTC day) when they fit; answers whether they did. Refused as a whole
 * when they do not, so the caller sends none of them.
 */
export async function takeDailyQuota(db: Db, key: string, quota: number, n = 1): Promise<boolean> {
  const rows = await execRows<{ n: number }>(
    db,
    sql`insert into sender_daily_counts as c (key, day, n)
        select ${key}, (now() at time zone 'utc')::date, ${n}::int where ${n}::int <= ${quota}::int
        on conflict (key, day) do update set n = c.n + excluded.n where c.n + excluded.n <= ${quota}::int
        returning c.n`,
  );
  return rows.length > 0;
}
