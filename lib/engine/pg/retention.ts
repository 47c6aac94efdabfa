import "server-only";
import { sql } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";

export type RetentionReport = { rateLimits: number; idempotencyKeys: number; oauthStates: number; runsExpired: number; emailRecords: number };

/** Longer than any throttle window in use (the longest is an hour): a row past it can never count again. */
const RATE_LIMIT_KEEP_MS = 25 * 60 * 60 * 1000;
/** An Idempotency-Key answers the same run for 24 h; past that its row is only dead weight. */
const IDEMPOTENCY_KEEP = "24 hours";
const RUN_BATCH = 200;

/**
 * The sweep's housekeeping: deletes expired throttle counters, idempotency keys, OAuth
 * states and the daily quota's counts of days before yesterday (UTC), and, when `retentionDays` > 0, drops the node
 * outputs and per-email records of runs that finished longer ago. What stays: the run (status, result counts, error,
 * times), its node summaries (status, error, item counts, times) and its logs. A dropped run is marked
 * (`outputs_expired_at`): its output endpoints answer 410 `output_expired`, and it can no longer be retried (nothing
 * left to reuse).
 *
 * Per-email records are the send ledger, and a retry chain shares its first run's ledger: they are deleted only once
 * every run of the chain has expired, so a recent retry of an old run never re-sends what the chain already sent.
 * Bounded work per call (the sweep calls it again later).
 */
export async function pruneExpired(db: Db, options: { retentionDays: number; now?: Date }): Promise<RetentionReport> {
  const now = options.now ?? new Date();
  const [small] = await execRows<{ rate_limits: number; idempotency_keys: number; oauth_states: number }>(
    db,
    sql`with rl as (
          delete from rate_limits where window_start < ${now.getTime() - RATE_LIMIT_KEEP_MS} returning 1
        ), ik as (
          delete from idempotency_keys where created_at < ${now.toISOString()}::timestamptz - ${IDEMPOTENCY_KEEP}::interval returning 1
        ), os as (
          delete from oauth_states where expires_at < ${now.toISOString()}::timestamptz returning 1
        ), qc as (
          delete from email_quota_counts where day < (${now.toISOString()}::timestamptz at time zone 'utc')::date - 1
        )
        select (select count(*) from rl)::int as rate_limits, (select count(*) from ik)::int as idempotency_keys,
               (select count(*) from os)::int as oauth_states`,
  );
  const report: RetentionReport = {
    rateLimits: Number(small?.rate_limits ?? 0),
    idempotencyKeys: Number(small?.idempotency_keys ?? 0),
    oauthStates: Number(small?.oauth_states ?? 0),
    runsExpired: 0,
    emailRecords: 0,
  };
  if (options.retentionDays <= 0) return report;

  const cutoff = new Date(now.getTime() - options.retentionDays * 86_400_000).toISOString();
  const expired = await execRows<{ id: string; ledger: string }>(
    db,
    sql`with batch as (
          select id from runs
          where outputs_expired_at is null and status in ('SUCCESS', 'FAILED') and completed_at < ${cutoff}::timestamptz
          order by completed_at limit ${RUN_BATCH}
          for update skip locked
        ), marked as (
          update runs r set outputs_expired_at = ${now.toISOString()}::timestamptz from batch b where r.id = b.id
          returning r.id, coalesce(r.chain_root_id, r.id) as ledger
        ), cleared as (
          update node_results n set output = null, spilled = null from marked m where n.run_id = m.id and n.output is not null
          returning 1
        ), pieces as (
          delete from node_output_chunks p using marked m where p.run_id = m.id
          returning 1
        )
        select m.id, m.ledger from marked m left join (select count(*) from cleared) c on true
          left join (select count(*) from pieces) p on true`,
  );
  report.runsExpired = expired.length;
  if (expired.length === 0) return report;
  const ledgers = JSON.stringify([...new Set(expired.map((r) => r.ledger))]);
  const [deleted] = await execRows<{ n: number }>(
    db,
    sql`with roots as (
          select l.id from jsonb_array_elements_text(${ledgers}::jsonb) as l(id)
          where not exists (
            select 1 from runs c where (c.id = l.id or c.chain_root_id = l.id) and c.outputs_expired_at is null)
        ), gone as (
          delete from email_sends e using roots where e.run_id = roots.id returning e.provider_message_id
        ), ids as (
          delete from email_provider_ids p using gone g where p.provider_message_id = g.provider_message_id
        ), answers as (
          -- The AI nodes' item records (prompts' answers) go with the per-email records of the same chains.
          delete from ai_items a using roots where a.run_id = roots.id
        )
        select count(*)::int as n from gone`,
  );
  report.emailRecords = Number(deleted?.n ?? 0);
  return report;
}
