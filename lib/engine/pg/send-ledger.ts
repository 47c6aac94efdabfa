import "server-only";
import { sql, type SQL } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import type { EmailSendStatus } from "@/db/schema";
import { newId } from "@/lib/ids";
import type { LedgerEmail, LedgerKey, SharedRow, SharedRowRef, StatusCounts } from "@/lib/ledgers/types";

/**
 * The send ledger on PostgreSQL: the SendLedger port of OUTPUT (lib/nodes/ports.ts, bound in lib/engine/pg-node-ports.ts).
 * One row per (ledger run, node, item): the exactly-once guard and the per-email record of a run. `runId` in a key is
 * the ledger run (the first run of a retry chain), so a retry never re-sends what its chain sent.
 */
/** Rows per ledger insert: on PGlite (synchronous WASM) 5,000 rows held the event loop ~110 ms per statement. */
const CHUNK = 1000;

/**
 * Records every email of the node before any provider call: a few large statements with one JSON parameter each (far
 * cheaper than one insert per batch, above all on PGlite). Idempotent on the unique key, so a resumed node records
 * nothing twice. Addresses on the account's suppression list are recorded as `suppressed` on the way in.
 */
export async function recordEmails(db: Db, key: LedgerKey, emails: LedgerEmail[], options: { reopen?: boolean } = {}): Promise<void> {
  // A node executed again (a retry chain, a resume) reopens what an earlier attempt left unsent (reopenUnsent): in the
  // first chunk's statement (it touches only rows that exist, the insert only rows that do not), or alone. Not for the
  // later parts of a node's emails (`reopen: false`): the first part reopened them, and they may be sending already.
  const reopen = options.reopen !== false;
  if (emails.length === 0) return reopen ? reopenUnsent(db, key) : undefined;
  // Two statements in flight: on PostgreSQL the next chunk is built and inserted (another pooled connection) while
  // the previous one is written (40,000 rows: 688 ms one at a time). Chunks are disjoint and each is idempotent, so
  // their order does not matter; a failure propagates after its sibling has settled.
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (next < emails.length && !failed) {
      const start = next;
      next += CHUNK;
      await recordChunk(db, key, emails, start, reopen && start === 0).catch((error: unknown) => {
        failed = true;
        throw error;
      });
    }
  };
  const settled = await Promise.allSettled([worker(), worker()]);
  const rejected = settled.find((s) => s.status === "rejected");
  if (rejected) throw (rejected as PromiseRejectedResult).reason;
}

async function recordChunk(db: Db, key: LedgerKey, emails: LedgerEmail[], start: number, reopen: boolean): Promise<void> {
  await db.execute(sql`
    with ${reopen ? sql`reopened as (${reopenStatement(key)}), ` : sql``}inserted as (${insertStatement(key, emails.slice(start, start + CHUNK))} returning status)
    ${quotaCountStatement(key.accountId)}`);
}

/**
 * Adds the rows a statement's `inserted` CTE (returning `status`) inserted pending to today's count of the account
 * (email_quota_counts, migration 0011): every ledger insert goes through here, so quotaBound is never below
 * usedTodayExact. Rows are created at the transaction's now(), the day this counts them on.
 */
function quotaCountStatement(accountId: string): SQL {
  return sql`insert into email_quota_counts as c (account_id, day, slot, n)
    select ${accountId}, (now() at time zone 'utc')::date, pg_backend_pid() % 64, x.n
    from (select count(*)::int as n from inserted where status = 'pending') x where x.n > 0
    on conflict (account_id, day, slot) do update set n = c.n + excluded.n`;
}

/**
 * Inserts `emails` as ledger rows of `key` (one JSON parameter), an address on the account's suppression list as
 * `suppressed`; rows that exist are left as they are (idempotent on the unique key).
 */
function insertStatement(key: LedgerKey, emails: LedgerEmail[]): SQL {
  const rows = JSON.stringify(emails.map((e) => ({ id: newId("eml"), i: e.itemIndex, to: e.to, s: e.subject, st: e.status, b: e.body ?? null, f: e.format ?? null })));
  return sql`insert into email_sends (id, run_id, node_id, item_index, account_id, "to", subject, status, body, format)
    select x.id, ${key.chainRunId}, ${key.nodeId}, x.i, ${key.accountId}, x."to", x.s,
      case when x.st <> 'duplicate' and exists (select 1 from suppressions s where s.account_id = ${key.accountId} and s.email = x."to")
        then 'suppressed' else x.st end,
      x.b, x.f
    from jsonb_to_recordset(${rows}::jsonb) as x(id text, i int, "to" text, s text, st text, b text, f text)
    on conflict (run_id, node_id, item_index) do nothing`;
}

/** What recordAndBegin answers: beginSending's figures and, when it was one statement, the first batch's. */
type Begun = {
  /** The exact figure (usedTodayExact), or — when it settled the check — quotaBound's, which is never below it. */
  usedToday: number;
  thisNode: number;
  /** The pending emails of items [0, firstTo) (as pendingInRange answers for batch 0), when read with the rest. */
  first?: { indexes: number[]; startedAtMs: number | null; inflight?: string[]; fresh?: boolean };
  /** The first batch's send slot, when `slot` was given and taken: milliseconds from the statement until it starts. */
  slotWaitMs?: number;
};

/**
 * What the daily quota counts (EMAIL_DAILY_QUOTA): workflow emails the account sent or is about to send today (UTC),
 * this node's apart — previews, suppressed, duplicate and failed records send nothing and do not count (an SMTP or
 * SES email `sending` or `unknown` may have gone: it counts). An index scan
 * over every email the account recorded today, each row read for its status: read it only when quotaBound cannot
 * settle the check.
 */
function usedTodayExact(key: LedgerKey): SQL {
  return sql`(select count(*) from email_sends
    where account_id = ${key.accountId} and status in ('pending', 'sent', 'sending', 'unknown')
      and created_at >= date_trunc('day', now() at time zone 'utc') at time zone 'utc'
      and not (run_id = ${key.chainRunId} and node_id = ${key.nodeId}))::int`;
}

/**
 * Every ledger row the account recorded pending today (UTC), whatever became of it: a few rows of email_quota_counts
 * (quotaCountStatement), never decremented, so never below usedTodayExact (which counts a subset of those rows).
 * When it plus the node's pending emails is within the quota, so is the exact figure, and the scan is skipped.
 */
function quotaBound(accountId: string): SQL {
  return sql`select coalesce(sum(n), 0)::int as n from email_quota_counts where account_id = ${accountId} and day = (now() at time zone 'utc')::date`;
}

/**
 * recordEmails and beginSending in one round trip when the node has at most CHUNK emails (else as two calls): the
 * rows recorded (an earlier attempt's unsent ones reopened), the quota figures, the node's progress, and the pending
 * emails of its first batch, items [0, firstTo), read with them (the suppression list was checked as they were
 * recorded). `slot(when)`: a statement taking the first batch's send slot (lib/email/pacing.ts slotStatement), taken
 * only if that batch has an email to send and the daily `quota` allows the node's emails (else the node fails before
 * any call). The statement cannot see its own writes, so the node's counts are its rows before it that neither CTE
 * touched plus what the reopening and the insert returned. `progressTotal`: the progress total to write instead of
 * the node's pending and sent count (`emails` are the first part of the node's).
 */
export async function recordAndBegin(
  db: Db,
  key: LedgerKey,
  execRunId: string,
  emails: LedgerEmail[],
  options: { firstTo: number; quota: number; slot?: (when: SQL) => SQL; progressTotal?: number },
): Promise<Begun> {
  if (emails.length === 0 || emails.length > CHUNK) {
    await recordEmails(db, key, emails);
    return beginSending(db, key, execRunId);
  }
  const slot = options.slot?.(sql`exists (select 1 from node_rows where status = 'pending' and item_index < ${options.firstTo})
      and (select n from used) + (select pending from mine) <= ${options.quota}::bigint`);
  const [row] = await execRows<{ used: number; mine: number; first: number[] | null; inflight: string[] | null; fresh: boolean | null; started_ms: number | string | null; slot_wait_ms?: number | string | null }>(
    db,
    sql`with reopened as (${reopenStatement(key)} returning e.item_index, e.status, e.send_key),
        inserted as (${insertStatement(key, emails)} returning item_index, status, send_key), counted as (${quotaCountStatement(key.accountId)}), node_rows as (
          select item_index, status, send_key from email_sends
          where run_id = ${key.chainRunId} and node_id = ${key.nodeId} and status not in ${reopened(key)}
          union all select item_index, status, send_key from reopened
          union all select item_index, status, send_key from inserted
        ), mine as (
          select count(*) filter (where status = 'pending')::int as pending, count(*) filter (where status = 'sent')::int as sent
          from node_rows
        ), progress as (
          update node_results set progress = jsonb_build_object('sent', m.sent, 'total', ${options.progressTotal === undefined ? sql`m.sent + m.pending` : sql`${options.progressTotal}::int`})
          from mine m where run_id = ${execRunId} and node_id = ${key.nodeId}
        ), used as (
          -- No shortcut for a head with nothing pending (as beginSending has): the caller adds the node's later rows
          -- to this figure to decide whether the quota surely allows them all.
          select case when b.n + (select pending from mine) <= ${options.quota}::bigint then b.n else ${usedTodayExact(key)} end as n
          from (${quotaBound(key.accountId)}) b
        )${slot ? sql`, slot as (${slot})` : sql``}
        select (select n from used) as used, (select pending from mine) as mine,
          array(select item_index from node_rows where status = 'pending' and item_index < ${options.firstTo} and send_key is null order by item_index) as first,
          array(select distinct send_key from node_rows where status = 'pending' and item_index < ${options.firstTo} and send_key is not null) as inflight,
          (select count(*) from inserted where item_index < ${options.firstTo}) = (select count(*) from node_rows where item_index < ${options.firstTo}) as fresh,
          (select extract(epoch from started_at) * 1000 from node_results where run_id = ${execRunId} and node_id = ${key.nodeId})::float8 as started_ms
          ${slot ? sql`, (select wait_ms from slot) as slot_wait_ms` : sql``}`,
  );
  return {
    usedToday: Number(row?.used ?? 0),
    thisNode: Number(row?.mine ?? 0),
    first: {
      indexes: (row?.first ?? []).map(Number),
      startedAtMs: row?.started_ms == null ? null : Number(row.started_ms),
      ...(row?.inflight?.length ? { inflight: row.inflight } : {}),
      fresh: row?.fresh === true,
    },
    ...(row?.slot_wait_ms != null ? { slotWaitMs: Math.ceil(Number(row.slot_wait_ms)) } : {}),
  };
}

/**
 * A node executed again in a retry chain: emails a failed attempt never sent become pending again, and pending ones
 * whose address was suppressed meanwhile are skipped. Sent ones stay sent (and are not sent again).
 */
async function reopenUnsent(db: Db, key: LedgerKey): Promise<void> {
  await db.execute(reopenStatement(key));
}

function reopenStatement(key: LedgerKey) {
  // A row in a shared call (send_key set) goes back to pending whatever the suppression list says: that call may have
  // reached the provider, and only the very same call may be sent again (sharedSendRows).
  return sql`update email_sends e set
      status = case when e.send_key is null and exists (select 1 from suppressions s where s.account_id = ${key.accountId} and s.email = e."to") then 'suppressed' else 'pending' end,
      error = null
    where e.run_id = ${key.chainRunId} and e.node_id = ${key.nodeId} and e.status in ${reopened(key)}`;
}

/** The statuses a new execution of the node reopens (reopenStatement): unsent ones, or (resend-unknown) unknown ones. */
function reopened(key: LedgerKey): SQL {
  return key.reopen === "unknown" ? sql`('unknown', 'pending')` : sql`('failed', 'pending')`;
}

/**
 * The pending emails of items [from, to), re-checking the suppression list at send time (an unsubscribe during a long
 * run counts), plus the node's start (its send budget runs from there) — one round trip per batch. `slot(when)`: a
 * statement taking the batch's send slot (lib/email/pacing.ts slotStatement), taken in the same round trip only when
 * the range has an email to send; `slotWaitMs` is then the wait from the statement until the slot starts. Pending rows
 * of a shared provider call (send_key set) are not in `indexes`: `inflight` names their calls, each to be sent again
 * whole (sharedSendRows); they are not re-checked against the suppression list (the call may have reached the provider).
 */
export async function pendingInRange(
  db: Db,
  key: LedgerKey,
  execRunId: string,
  from: number,
  to: number,
  slot?: (when: SQL) => SQL,
): Promise<{ indexes: number[]; startedAtMs: number | null; slotWaitMs?: number; inflight?: string[] }> {
  const slotSql = slot?.(sql`exists (select 1 from pending where send_key is null)`);
  const [row] = await execRows<{ indexes: number[] | null; inflight: string[] | null; started_ms: number | string | null; slot_wait_ms?: number | string | null }>(
    db,
    sql`with recent as materialized (
          ${suppressedSinceRecorded(key, execRunId)}
        ), sup as (
          update email_sends e set status = 'suppressed'
          from recent s
          where exists (select 1 from recent)
            and e.run_id = ${key.chainRunId} and e.node_id = ${key.nodeId} and e.item_index >= ${from} and e.item_index < ${to}
            and e.status = 'pending' and e.send_key is null and s.email = e."to"
          returning e.item_index
        ), pending as (
          select e.item_index, e.send_key from email_sends e
          where e.run_id = ${key.chainRunId} and e.node_id = ${key.nodeId} and e.item_index >= ${from} and e.item_index < ${to}
            and e.status = 'pending' and e.item_index not in (select item_index from sup)
        )${slotSql ? sql`, slot as (${slotSql})` : sql``}
        select array(select item_index from pending where send_key is null order by item_index) as indexes,
          array(select distinct send_key from pending where send_key is not null) as inflight,
          (select extract(epoch from started_at) * 1000 from node_results where run_id = ${execRunId} and node_id = ${key.nodeId})::float8 as started_ms
          ${slotSql ? sql`, (select wait_ms from slot) as slot_wait_ms` : sql``}`,
  );
  return {
    indexes: (row?.indexes ?? []).map(Number),
    ...(row?.inflight?.length ? { inflight: row.inflight } : {}),
    startedAtMs: row?.started_ms == null ? null : Number(row.started_ms),
    ...(row?.slot_wait_ms != null ? { slotWaitMs: Math.ceil(Number(row.slot_wait_ms)) } : {}),
  };
}

/**
 * The account's suppressed addresses that a pending row of the node may not have been checked against: those added
 * since the node's execution started, five minutes earlier for a suppression whose transaction began before and
 * committed after that (every pending row was checked when it was recorded or reopened, after the start). Usually
 * none, so the send-time re-check costs one index range read instead of a probe per email (100 per batch; ~0.6 ms of
 * PGlite's only thread). Every suppression when the start is not written yet.
 */
function suppressedSinceRecorded(key: LedgerKey, execRunId: string): SQL {
  return sql`select s.email from suppressions s
          where s.account_id = ${key.accountId}
            and s.created_at >= coalesce(
              (select started_at - interval '5 minutes' from node_results where run_id = ${execRunId} and node_id = ${key.nodeId}),
              '-infinity'::timestamptz)`;
}

/**
 * Marks a delivered batch sent (and records its provider ids for the webhook); answers how many rows changed. The
 * node's progress is not written here: it is one row every batch of the node would update, and this statement's
 * commit waits for the WAL flush, so concurrent batches queued behind each other's flush on its lock (~2–5 ms each on
 * this VM). writeSentProgress writes it apart, throttled (lib/engine/pg-node-ports.ts).
 */
export async function markSent(db: Db, key: LedgerKey, sent: { itemIndex: number; providerId: string }[]): Promise<number> {
  if (sent.length === 0) return 0;
  const { rows, low, high } = sentRows(sent);
  // The item range bounds the index scan: without it a planner whose statistics predate the node's 40,000 ledger
  // rows (PGlite never auto-analyzes) hash-joins the batch against every row of the node (~20 ms per batch).
  const [row] = await execRows<{ n: number }>(
    db,
    sql`with upd as (
          update email_sends as e set ${markedSent}
          from jsonb_to_recordset(${rows}::jsonb) as v(idx int, pid text)
          where e.run_id = ${key.chainRunId} and e.node_id = ${key.nodeId} and e.item_index >= ${low} and e.item_index <= ${high}
            and e.item_index = v.idx and e.status <> 'sent'
          returning e.id, e.provider_message_id
        ), ${providerIds}, ${sentCountStatement(key)}
        select count(*)::int as n from upd`,
  );
  return Number(row?.n ?? 0);
}

/**
 * The node's progress `sent` set to its ledger's sent count (its `total` kept: while the node still records its rows,
 * it is every rendered email), read from node_sent_counts: every statement that marks rows sent adds them there in
 * the same transaction (sentCountStatement), so the sum is the count of the node's sent rows without a scan of them
 * (migration 0012). Absolute, so statements of any age, order or process never count a batch twice or move progress
 * back; written only when it rises.
 */
export async function writeSentProgress(db: Db, key: LedgerKey, execRunId: string): Promise<void> {
  await db.execute(sql`
    with c as (
      select coalesce(sum(n), 0)::int as sent from node_sent_counts where run_id = ${key.chainRunId} and node_id = ${key.nodeId}
    )
    update node_results set progress = jsonb_build_object('sent', c.sent, 'total', coalesce((progress->>'total')::int, 0))
    from c where run_id = ${execRunId} and node_id = ${key.nodeId} and coalesce((progress->>'sent')::int, -1) < c.sent`);
}

/**
 * The CTE `sent_counted` of markSent's statement: the rows `upd` marked sent added to the node's count (migration
 * 0012), which writeSentProgress sums. A row becomes 'sent' once (`status <> 'sent'`), so the count is exact. `slot`
 * (the backend's pid modulo 64): concurrent batches of a node on other connections add to other rows and do not wait
 * for each other's commit. markSentAndCount and markSharedSentAndCount do not add to it: they mark the only batch of a
 * node of at most 100 emails (lib/nodes/output/execute.ts), whose progress they write from the ledger itself, and writeSentProgress is
 * called only for the batches of larger nodes (markSent) — a node's size is the same in every run of its chain, its
 * inputs being reused. One insert fewer (with its foreign-key check) in every tiny run.
 */
function sentCountStatement(key: LedgerKey): SQL {
  return sql`sent_counted as (
      insert into node_sent_counts as c (run_id, node_id, slot, n)
      select ${key.chainRunId}, ${key.nodeId}, pg_backend_pid() % 64, x.n from (select count(*)::int as n from upd) x where x.n > 0
      on conflict (run_id, node_id, slot) do update set n = c.n + excluded.n
    )`;
}

/** What marking a ledger row sent sets (markSent, markSentAndCount, markSharedSentAndCount), from a row `v` with its `pid`. */
const markedSent = sql`status = 'sent', sent_at = now(), provider_message_id = v.pid, error = null`;

/**
 * The CTE `provider_ids` of markSent's statements: the provider message ids of the rows `upd` marked sent, for the
 * Resend event webhook's lookup (lib/services/suppressions/handle-resend-event.ts). Kept out of email_sends' indexes
 * so that marking a batch sent is a heap-only update (migration 0010).
 */
const providerIds = sql`provider_ids as (
      insert into email_provider_ids (provider_message_id, email_id)
      select provider_message_id, id from upd where provider_message_id is not null
      on conflict (provider_message_id) do nothing
    )`;

/**
 * A delivered batch as markSent's JSON parameter, and its lowest and highest item: the range bounds the statement's
 * index scan (see markSent).
 */
function sentRows(sent: { itemIndex: number; providerId: string }[]): { rows: string; low: number; high: number } {
  let low = sent[0].itemIndex;
  let high = low;
  for (const s of sent) {
    low = Math.min(low, s.itemIndex);
    high = Math.max(high, s.itemIndex);
  }
  return { rows: JSON.stringify(sent.map((s) => ({ idx: s.itemIndex, pid: s.providerId }))), low, high };
}

/**
 * markSent and writeProgress in one round trip (the last batch of a node, right before it completes): the batch marked
 * sent, and the node's counts by status after it written as its progress `{ sent, total }` and returned. The statement
 * cannot see its own update, so the counts are the rows before it, moved by what the update returned (each row's
 * earlier status comes from the same row as the statement found it).
 */
export async function markSentAndCount(db: Db, key: LedgerKey, execRunId: string, sent: { itemIndex: number; providerId: string }[]): Promise<StatusCounts> {
  if (sent.length === 0) return writeProgress(db, key, execRunId);
  const { rows, low, high } = sentRows(sent);
  const counts = await execRows<{ status: EmailSendStatus | null; n: number }>(
    db,
    sql`with upd as (
          update email_sends as e set ${markedSent}
          from jsonb_to_recordset(${rows}::jsonb) as v(idx int, pid text), email_sends as was
          where e.run_id = ${key.chainRunId} and e.node_id = ${key.nodeId} and e.item_index >= ${low} and e.item_index <= ${high}
            and e.item_index = v.idx and e.status <> 'sent' and was.id = e.id
          returning e.id, e.provider_message_id, was.status as was
        ), ${providerIds}, c as (
          select status, sum(n)::int as n from (
            select status, count(*) as n from email_sends where run_id = ${key.chainRunId} and node_id = ${key.nodeId} group by status
            union all select 'sent', count(*) from upd
            union all select was, -count(*) from upd group by was
          ) z group by status
        ), upd_progress as (
          ${progressFromCounts(execRunId, key.nodeId)}
        )
        select status, n from c`,
  );
  return toCounts(counts);
}

/**
 * The node's ledger counts by status, written as its progress `{ sent, total }` in the same round trip (at the end of
 * the node; the batches move progress on incrementally, and `beginSending` sets it at the start).
 */
export async function writeProgress(db: Db, key: LedgerKey, execRunId: string): Promise<StatusCounts> {
  const rows = await execRows<{ status: EmailSendStatus | null; n: number }>(
    db,
    sql`with c as (
          select status, count(*)::int as n from email_sends where run_id = ${key.chainRunId} and node_id = ${key.nodeId} group by status
        ), upd as (
          ${progressFromCounts(execRunId, key.nodeId)}
        )
        select status, n from c`,
  );
  return toCounts(rows);
}

/** The node's progress `{ sent, total }` from a CTE `c(status, n)` of its ledger counts (a statement's last step). */
function progressFromCounts(execRunId: string, nodeId: string): SQL {
  return sql`update node_results set progress = jsonb_build_object(
            'sent', coalesce((select sum(n) from c where status = 'sent'), 0)::int,
            'total', coalesce((select sum(n) from c where status in ('sent', 'pending')), 0)::int)
          where run_id = ${execRunId} and node_id = ${nodeId}`;
}

function toCounts(rows: { status: EmailSendStatus | null; n: number }[]): StatusCounts {
  const counts: StatusCounts = { pending: 0, sent: 0, suppressed: 0, duplicate: 0, failed: 0, preview: 0, sending: 0, unknown: 0 };
  for (const row of rows) if (row.status) counts[row.status] = Number(row.n);
  return counts;
}

/** After a node failure: its unsent emails will never be sent by this run, so they stop counting against the quota. */
export async function markUnsentFailed(db: Db, key: LedgerKey, error: string): Promise<void> {
  await db.execute(sql`
    update email_sends set status = 'failed', error = ${error}
    where run_id = ${key.chainRunId} and node_id = ${key.nodeId} and status = 'pending'`);
}

export async function countByStatus(db: Db, ledgerRunId: string, nodeId: string): Promise<StatusCounts> {
  const rows = await execRows<{ status: EmailSendStatus; n: number }>(
    db,
    sql`select status, count(*)::int as n from email_sends where run_id = ${ledgerRunId} and node_id = ${nodeId} group by status`,
  );
  return toCounts(rows);
}

/**
 * Before the node's first batch, in one round trip: workflow emails the account sent or is about to send today (UTC),
 * this node's pending ones apart — what the daily quota (EMAIL_DAILY_QUOTA) counts; previews, suppressed and
 * duplicate records send nothing and do not count — and the node's progress `{ sent, total }` written for the canvas.
 * A node with nothing pending sends nothing, so the quota has nothing to check: `usedToday` is then 0 without the
 * count (an OUTPUT node with no emails, e.g. after a FILTER that kept none, scanned the account's emails of the day:
 * 60 ms per run on PGlite after a 40,000-email run, bench/freeze.ts).
 */
export async function beginSending(db: Db, key: LedgerKey, execRunId: string): Promise<{ usedToday: number; thisNode: number }> {
  const [row] = await execRows<{ used: number; mine: number }>(
    db,
    sql`with mine as (
          select count(*) filter (where status = 'pending')::int as pending, count(*) filter (where status = 'sent')::int as sent
          from email_sends where run_id = ${key.chainRunId} and node_id = ${key.nodeId}
        ), progress as (
          update node_results set progress = jsonb_build_object('sent', m.sent, 'total', m.sent + m.pending)
          from mine m where run_id = ${execRunId} and node_id = ${key.nodeId}
        )
        select case when (select pending from mine) = 0 then 0 else ${usedTodayExact(key)} end as used, (select pending from mine) as mine`,
  );
  return { usedToday: Number(row?.used ?? 0), thisNode: Number(row?.mine ?? 0) };
}

/**
 * `jsonb_to_recordset(json)` with the planner told how many rows it has. PostgreSQL estimates 100 rows for
 * any set-returning function, so a shared call's statements, which join its handful of rows to `email_sends` and
 * `node_results`, were planned as a hash join over a sequential scan of the whole table until that table held some
 * 10,000 rows — and a plan cached by a prepared statement stays so for the connection's life (pg_stat_statements over
 * bench/tiny-exec's 3,000 runs: 1.94 ms per marking of a call of ~8 runs, 0.73 ms per claim). A literal LIMIT (the
 * count rounded up to a power of two: at most 8 shapes of each row source) makes the estimate that count.
 */
function recordset(json: string, count: number, columns: string): SQL {
  const limit = 2 ** Math.ceil(Math.log2(Math.max(1, count)));
  return sql`(select * from jsonb_to_recordset(${json}::jsonb) as v(${sql.raw(columns)}) limit ${sql.raw(String(limit))})`;
}

/**
 * Before a shared provider call: gives its idempotency key `sendKey` and payload to each row that is still pending and
 * in no other call, in one statement; answers the rows that got them (only those may go in the call). From here on a
 * resume of any of their runs sends the whole call again (sharedSendRows), never their emails alone.
 */
export async function claimSharedSend(db: Db, sendKey: string, rows: SharedRow[]): Promise<SharedRowRef[]> {
  if (rows.length === 0) return [];
  const json = JSON.stringify(rows.map((r) => ({ r: r.runId, n: r.nodeId, i: r.itemIndex, p: r.payload })));
  const claimed = await execRows<{ run_id: string; node_id: string; item_index: number }>(
    db,
    sql`update email_sends e set send_key = ${sendKey}, send_payload = v.p
        from ${recordset(json, rows.length, "r text, n text, i int, p text")} as v
        where e.run_id = v.r and e.node_id = v.n and e.item_index = v.i and e.status = 'pending' and e.send_key is null
        returning e.run_id, e.node_id, e.item_index`,
  );
  return claimed.map((c) => ({ runId: c.run_id, nodeId: c.node_id, itemIndex: Number(c.item_index) }));
}

/** Every row of the shared call `sendKey`, whatever its status now, with its payload: what the call sent. */
export async function sharedSendRows(db: Db, sendKey: string): Promise<(SharedRow & { status: EmailSendStatus })[]> {
  const rows = await execRows<{ run_id: string; node_id: string; item_index: number; status: EmailSendStatus; send_payload: string }>(
    db,
    sql`select run_id, node_id, item_index, status, send_payload from email_sends where send_key = ${sendKey}`,
  );
  return rows.map((r) => ({ runId: r.run_id, nodeId: r.node_id, itemIndex: Number(r.item_index), status: r.status, payload: r.send_payload }));
}

/**
 * The shared call `sendKey` was delivered (lib/nodes/output/shared-send.ts): its rows not yet sent marked sent with
 * their provider ids, and, for each of `nodes` (a run's node whose only batch went in the call whole), its ledger
 * counts by status after that, written as the progress `{ sent, total }` of its node in the executing run and returned
 * — what markSentAndCount does for one node, here for every run in the call in one statement (one round trip and one
 * commit instead of one per run). As there, the statement cannot see its own update: the counts are the rows before
 * it, moved by what the update returned. A call sent again on a resume (resendShared) marks its rows with no `nodes`.
 */
export async function markSharedSentAndCount(
  db: Db,
  sendKey: string,
  sent: (SharedRowRef & { providerId: string })[],
  nodes: { runId: string; nodeId: string; execRunId: string }[],
): Promise<StatusCounts[]> {
  if (sent.length === 0 && nodes.length === 0) return [];
  const json = JSON.stringify(sent.map((s) => ({ r: s.runId, n: s.nodeId, idx: s.itemIndex, pid: s.providerId })));
  const nodesJson = JSON.stringify(nodes.map((n) => ({ r: n.runId, n: n.nodeId, x: n.execRunId })));
  const rows = await execRows<{ r: string; n: string; status: EmailSendStatus | null; k: number }>(
    db,
    sql`with upd as (
          update email_sends as e set ${markedSent}
          from ${recordset(json, sent.length, "r text, n text, idx int, pid text")} as v, email_sends as was
          where e.send_key = ${sendKey} and e.run_id = v.r and e.node_id = v.n and e.item_index = v.idx and e.status <> 'sent'
            and was.id = e.id
          returning e.id, e.run_id, e.node_id, e.provider_message_id, was.status as was
        ), ${providerIds}, p as (
          select distinct r, n, x from ${recordset(nodesJson, nodes.length, "r text, n text, x text")} as p
        ), c as (
          -- Each node's rows through the (run, node, item) index, whatever the planner thinks of the table's size.
          select r, n, status, sum(k)::int as k from (
            select q.r, q.n, s.status, s.k
              from (select distinct r, n from p) q
              cross join lateral (select e.status, count(*) as k from email_sends e where e.run_id = q.r and e.node_id = q.n group by e.status) s
            union all select run_id, node_id, 'sent', count(*) from upd group by 1, 2
            union all select run_id, node_id, was, -count(*) from upd group by 1, 2, 3
          ) z group by r, n, status
        ), upd_progress as (
          update node_results as nr set progress = jsonb_build_object(
              'sent', coalesce((select sum(k) from c where c.r = p.r and c.n = p.n and c.status = 'sent'), 0)::int,
              'total', coalesce((select sum(k) from c where c.r = p.r and c.n = p.n and c.status in ('sent', 'pending')), 0)::int)
          from p where nr.run_id = p.x and nr.node_id = p.n
        )
        select c.r, c.n, c.status, c.k from c join (select distinct r, n from p) q on q.r = c.r and q.n = c.n`,
  );
  return nodes.map((node) => toCounts(rows.filter((row) => row.r === node.runId && row.n === node.nodeId).map((row) => ({ status: row.status, n: row.k }))));
}

/**
 * The provider refused the shared call `sendKey` outright (nothing of it was sent): its rows leave it, so each run
 * sends its own emails again alone.
 */
export async function releaseSharedSend(db: Db, sendKey: string): Promise<void> {
  await db.execute(sql`update email_sends set send_key = null, send_payload = null where send_key = ${sendKey} and status in ('pending', 'failed')`);
}
