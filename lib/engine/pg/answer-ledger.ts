import "server-only";
import { sql } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import { dbState } from "@/db/handle-state";
import { groupCommit } from "@/lib/group-commit";
import type { AnswerRecord, AnswerRow, AnswerStatus, AnswerTotals, LedgerKey } from "@/lib/ledgers/types";

/**
 * The answer ledger on PostgreSQL: the AnswerLedger port of the AI node (lib/nodes/ports.ts, bound in
 * lib/engine/pg-node-ports.ts). One row per (ledger run, node, item) in `ai_items`; `runId` in a key is the ledger run
 * (the first run of a retry chain), so no run of a chain asks again what another answered for the same request.
 */
const CHUNK = 1000;

/**
 * Records every item's request hash before any call, a chunk per statement (one JSON parameter). A row that exists
 * keeps its answer when its hash is the same; a changed request, or an item that failed or was skipped, is pending
 * again. Then, with `reuseDays`, pending items take an identical request's answer of the account from that window.
 */
export async function recordRequests(db: Db, key: LedgerKey, requests: { itemIndex: number; hash: string }[], options: { reuseDays?: number } = {}): Promise<void> {
  for (let start = 0; start < requests.length; start += CHUNK) {
    const rows = JSON.stringify(requests.slice(start, start + CHUNK).map((r) => ({ i: r.itemIndex, h: r.hash })));
    await db.execute(sql`
      insert into ai_items (run_id, node_id, item_index, account_id, request_hash)
      select ${key.chainRunId}, ${key.nodeId}, x.i, ${key.accountId}, x.h
      from jsonb_to_recordset(${rows}::jsonb) as x(i int, h text)
      on conflict (run_id, node_id, item_index) do update set
        request_hash = excluded.request_hash,
        status = 'pending', output = null, error = null, input_tokens = null, output_tokens = null, cost_usd = null,
        reused = false, answered_at = null
      where ai_items.request_hash <> excluded.request_hash or ai_items.status in ('failed', 'skipped')`);
  }
  if (options.reuseDays) await reuseAnswers(db, key, options.reuseDays);
}

/** Pending items answered by an identical request (same hash) of the account within `days`: copied, not asked. */
async function reuseAnswers(db: Db, key: LedgerKey, days: number): Promise<void> {
  await db.execute(sql`
    update ai_items t set status = 'done', output = s.output, input_tokens = s.input_tokens, output_tokens = s.output_tokens,
      cost_usd = 0, reused = true, answered_at = now()
    from ai_items p
    cross join lateral (
      select o.output, o.input_tokens, o.output_tokens from ai_items o
      where o.account_id = ${key.accountId} and o.request_hash = p.request_hash and o.status = 'done'
        and o.answered_at >= now() - make_interval(days => ${days}::int)
        and not (o.run_id = p.run_id and o.node_id = p.node_id)
      order by o.answered_at desc limit 1
    ) s
    where p.run_id = ${key.chainRunId} and p.node_id = ${key.nodeId} and p.status = 'pending'
      and t.run_id = p.run_id and t.node_id = p.node_id and t.item_index = p.item_index`);
}

export async function pendingItems(db: Db, key: LedgerKey, from: number, to: number): Promise<number[]> {
  const rows = await execRows<{ item_index: number }>(
    db,
    sql`select item_index from ai_items
        where run_id = ${key.chainRunId} and node_id = ${key.nodeId} and status = 'pending' and item_index >= ${from} and item_index < ${to}
        order by item_index`,
  );
  return rows.map((r) => Number(r.item_index));
}

/**
 * An answer or a failure, kept only while the row still asks the same request (a changed one is asked again). An
 * answer that arrives after its node stopped (the item was skipped meanwhile) is still recorded: it was paid for.
 *
 * Group commit, as the hot statements of enqueue: the answers that arrive while a statement is in flight go out
 * together in the next one (one statement per round trip instead of one per item; a lone answer goes at once).
 * `settleItem` resolves only once its answer is committed, so "recorded as it arrives" holds for every answer the
 * caller has seen settled: the caller moves on to its next item only after that. The rule a crash keeps: the answers
 * that may be lost are those of the group whose statement was in flight (or queued behind it) — answers no
 * statement has recorded yet, at most one group per process — and only those items are asked again on resume. An
 * item whose answer was recorded is never asked again.
 *
 * `record.progressRunId`: the execution run whose node row carries `progress: { done, total }`; the same statement
 * moves its `done` on by the items this group settled (pending or skipped → done or failed), so progress costs no
 * statement and no count of the node's rows.
 */
export function settleItem(db: Db, key: LedgerKey, record: AnswerRecord): Promise<void> {
  return dbState(db, "answer-ledger-settle", () => groupCommit((items: Settled[]) => settleItems(db, items), SETTLE_GROUP))({ key, record });
}

/** Answers per settle statement at most. */
const SETTLE_GROUP = 500;
type Settled = { key: LedgerKey; record: AnswerRecord };

async function settleItems(db: Db, items: Settled[]): Promise<void[]> {
  const rows = JSON.stringify(
    items.map(({ key, record: r }) => ({
      r: key.chainRunId,
      n: key.nodeId,
      i: r.itemIndex,
      h: r.hash,
      s: (r.output ? "done" : "failed") satisfies AnswerStatus,
      o: r.output ?? null,
      e: r.error ?? null,
      it: r.inputTokens ?? null,
      ot: r.outputTokens ?? null,
      c: r.costUsd ?? null,
      p: r.progressRunId ?? null,
    })),
  );
  await db.execute(sql`
    with b as (
      select * from jsonb_to_recordset(${rows}::jsonb) as x(r text, n text, i int, h text, s text, o jsonb, e text, it int, ot int, c float8, p text)
    ), settled as (
      update ai_items t set status = b.s, output = b.o, error = b.e, input_tokens = b.it, output_tokens = b.ot,
        cost_usd = b.c, reused = false, answered_at = now()
      from b
      where t.run_id = b.r and t.node_id = b.n and t.item_index = b.i and t.request_hash = b.h and t.status in ('pending', 'skipped')
      returning b.p, b.n
    )
    update node_results nr set progress = jsonb_build_object(
        'done', least(coalesce((nr.progress->>'done')::int, 0) + c.k, (nr.progress->>'total')::int),
        'total', (nr.progress->>'total')::int)
    from (select p, n, count(*)::int as k from settled where p is not null group by p, n) c
    where nr.run_id = c.p and nr.node_id = c.n and nr.progress is not null`);
  return items.map(() => undefined);
}

export async function skipPendingItems(db: Db, key: LedgerKey, error: string): Promise<void> {
  await db.execute(sql`
    update ai_items set status = 'skipped', error = ${error}
    where run_id = ${key.chainRunId} and node_id = ${key.nodeId} and status = 'pending'`);
}

export async function answerTotals(db: Db, key: LedgerKey): Promise<AnswerTotals> {
  const [row] = await execRows<Record<string, number | string | null>>(
    db,
    sql`select count(*) filter (where status = 'pending')::int as pending, count(*) filter (where status = 'done')::int as done,
          count(*) filter (where status = 'failed')::int as failed, count(*) filter (where status = 'skipped')::int as skipped,
          count(*) filter (where answered_at is not null and not reused)::int as calls,
          coalesce(sum(input_tokens) filter (where not reused), 0)::float8 as input_tokens,
          coalesce(sum(output_tokens) filter (where not reused), 0)::float8 as output_tokens,
          case when count(*) filter (where answered_at is not null and not reused and cost_usd is null and input_tokens is not null) > 0 then null
            else coalesce(sum(cost_usd) filter (where not reused), 0) end::float8 as cost_usd
        from ai_items where run_id = ${key.chainRunId} and node_id = ${key.nodeId}`,
  );
  const n = (v: unknown) => Number(v ?? 0);
  return {
    counts: { pending: n(row?.pending), done: n(row?.done), failed: n(row?.failed), skipped: n(row?.skipped) },
    calls: n(row?.calls),
    inputTokens: n(row?.input_tokens),
    outputTokens: n(row?.output_tokens),
    costUsd: row?.cost_usd == null ? null : Number(row.cost_usd),
  };
}

export async function spentSoFar(db: Db, key: LedgerKey): Promise<{ node: number; run: number }> {
  const [row] = await execRows<{ node: number | string | null; run: number | string | null }>(
    db,
    sql`select coalesce(sum(cost_usd) filter (where node_id = ${key.nodeId}), 0)::float8 as node, coalesce(sum(cost_usd), 0)::float8 as run
        from ai_items where run_id = ${key.chainRunId} and not reused`,
  );
  return { node: Number(row?.node ?? 0), run: Number(row?.run ?? 0) };
}

/** The run result's `ai`: paid calls, tokens and cost of every AI node's items of the ledger run. */
export async function runAiTotals(db: Db, ledgerRunId: string): Promise<{ calls: number; inputTokens: number; outputTokens: number; costUsd: number | null }> {
  const [row] = await execRows<Record<string, number | string | null>>(
    db,
    sql`select count(*) filter (where answered_at is not null and not reused)::int as calls,
          coalesce(sum(input_tokens) filter (where not reused), 0)::float8 as input_tokens,
          coalesce(sum(output_tokens) filter (where not reused), 0)::float8 as output_tokens,
          case when count(*) filter (where answered_at is not null and not reused and cost_usd is null and input_tokens is not null) > 0 then null
            else coalesce(sum(cost_usd) filter (where not reused), 0) end::float8 as cost_usd
        from ai_items where run_id = ${ledgerRunId}`,
  );
  return {
    calls: Number(row?.calls ?? 0),
    inputTokens: Number(row?.input_tokens ?? 0),
    outputTokens: Number(row?.output_tokens ?? 0),
    costUsd: row?.cost_usd == null ? null : Number(row.cost_usd),
  };
}

type NodeEstimate = { inputTokens: number; outputTokens: number; costUsd: number | null };

/**
 * An estimate run's `result.estimate`: each AI node's estimate (its output's `estimate`) and their sums; the total
 * cost is null when any node's is unknown.
 */
export async function runEstimate(
  db: Db,
  runId: string,
  held: { nodeId: string; output: Record<string, unknown> }[] = [],
): Promise<{ nodes: Record<string, unknown>; inputTokens: number; outputTokens: number; costUsd: number | null }> {
  const written = await execRows<{ node_id: string; estimate: NodeEstimate | string | null }>(
    db,
    sql`select node_id, output->'estimate' as estimate from node_results
        where run_id = ${runId} and type = 'AI' and status = 'SUCCESS' and output ? 'estimate'`,
  );
  const heldRows = held.flatMap((s) => (s.output.estimate ? [{ node_id: s.nodeId, estimate: s.output.estimate as NodeEstimate }] : []));
  const rows = [...written.filter((r) => !heldRows.some((h) => h.node_id === r.node_id)), ...heldRows];
  const nodes: Record<string, unknown> = {};
  let inputTokens = 0;
  let outputTokens = 0;
  let costUsd: number | null = 0;
  for (const row of rows) {
    const estimate = (typeof row.estimate === "string" ? JSON.parse(row.estimate) : row.estimate) as NodeEstimate | null;
    if (!estimate) continue;
    nodes[row.node_id] = estimate;
    inputTokens += Number(estimate.inputTokens ?? 0);
    outputTokens += Number(estimate.outputTokens ?? 0);
    costUsd = costUsd === null || estimate.costUsd == null ? null : costUsd + Number(estimate.costUsd);
  }
  return { nodes, inputTokens, outputTokens, costUsd };
}

export async function readItems(db: Db, key: LedgerKey, from: number, to: number, status?: AnswerStatus): Promise<AnswerRow[]> {
  const rows = await execRows<{
    item_index: number;
    status: AnswerStatus;
    output: Record<string, unknown> | string | null;
    error: string | null;
    input_tokens: number | null;
    output_tokens: number | null;
    cost_usd: number | null;
    reused: boolean;
  }>(
    db,
    sql`select item_index, status, output, error, input_tokens, output_tokens, cost_usd, reused from ai_items
        where run_id = ${key.chainRunId} and node_id = ${key.nodeId} and item_index >= ${from} and item_index < ${to}
          ${status ? sql`and status = ${status}` : sql``}
        order by item_index`,
  );
  return rows.map((r) => ({
    itemIndex: Number(r.item_index),
    status: r.status,
    output: typeof r.output === "string" ? (JSON.parse(r.output) as Record<string, unknown>) : r.output,
    error: r.error,
    inputTokens: r.input_tokens == null ? null : Number(r.input_tokens),
    outputTokens: r.output_tokens == null ? null : Number(r.output_tokens),
    costUsd: r.cost_usd == null ? null : Number(r.cost_usd),
    reused: r.reused === true,
  }));
}

export async function writeAiProgress(db: Db, execRunId: string, nodeId: string, progress: { done: number; total: number }): Promise<void> {
  await db.execute(sql`update node_results set progress = ${JSON.stringify(progress)}::jsonb where run_id = ${execRunId} and node_id = ${nodeId}`);
}
