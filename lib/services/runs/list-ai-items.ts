import "server-only";
import { sql } from "drizzle-orm";
import { execRows, getDb } from "@/db/client";
import type { AiItemStatus } from "@/db/schema";
import { AppError, notFound } from "@/lib/errors";

const STATUSES: AiItemStatus[] = ["pending", "done", "failed", "skipped"];

type ItemRow = {
  item_index: number;
  status: AiItemStatus;
  output: Record<string, unknown> | string | null;
  error: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  reused: boolean;
};

/**
 * The items of one AI node with forEach of a run, from the answer ledger of the run's retry chain (of the sent preview's,
 * for a node the send copied from it): a page by item index
 * (optionally of one status) and the count of every status. 404 for a node that is not an AI node with forEach of the
 * run (or another account's run); 410 once retention removed the run's outputs.
 */
export async function listAiItems(
  accountId: string,
  runId: string,
  nodeId: string,
  query: { status?: AiItemStatus; offset: number; limit: number },
) {
  const db = await getDb();
  const [run] = await execRows<{ ledger_run_id: string; for_each: string | null; outputs_expired_at: string | Date | null }>(
    db,
    // A node copied from the run this one sends (or resends) has its items in that run's ledger.
    sql`select case when nr.reused and src.id is not null then coalesce(src.chain_root_id, src.id)
                else coalesce(r.chain_root_id, r.id) end as ledger_run_id,
          r.outputs_expired_at,
          (select n->'data'->>'forEach' from jsonb_array_elements(r.graph->'nodes') as n
           where n->>'id' = ${nodeId} and n->>'type' = 'AI' and coalesce(n->'data'->>'forEach', '') <> '' limit 1) as for_each
        from runs r
        left join runs src on src.id = coalesce(r.send_of, r.resend_of) and src.account_id = r.account_id
        left join node_results nr on nr.run_id = r.id and nr.node_id = ${nodeId}
        where r.id = ${runId} and r.account_id = ${accountId}`,
  );
  if (!run || !run.for_each) throw notFound("AI node with forEach of this run");
  if (run.outputs_expired_at) throw new AppError("output_expired", "The item records of this run were deleted after RUN_OUTPUT_RETENTION_DAYS; the run's counts remain.");
  const ledger = run.ledger_run_id;
  const [countRows, rows] = await Promise.all([
    execRows<{ status: AiItemStatus; n: number }>(
      db,
      sql`select status, count(*)::int as n from ai_items where run_id = ${ledger} and node_id = ${nodeId} group by status`,
    ),
    execRows<ItemRow>(
      db,
      sql`select item_index, status, output, error, input_tokens, output_tokens, reused
          from ai_items where run_id = ${ledger} and node_id = ${nodeId}
          ${query.status ? sql`and status = ${query.status}` : sql``}
          order by item_index offset ${query.offset} limit ${query.limit}`,
    ),
  ]);
  const counts = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<AiItemStatus, number>;
  for (const row of countRows) counts[row.status] = Number(row.n);
  const total = query.status ? counts[query.status] : Object.values(counts).reduce((a, b) => a + b, 0);
  return {
    items: rows.map((row) => ({
      index: Number(row.item_index),
      status: row.status,
      output: typeof row.output === "string" ? (JSON.parse(row.output) as Record<string, unknown>) : row.output,
      error: row.error,
      inputTokens: row.input_tokens === null ? null : Number(row.input_tokens),
      outputTokens: row.output_tokens === null ? null : Number(row.output_tokens),
      reused: row.reused === true,
    })),
    total,
    counts,
    // The list the items are elements of (the run's snapshot), so a view can show each element beside its answer.
    forEach: run.for_each,
  };
}
