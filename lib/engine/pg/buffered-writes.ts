import "server-only";
import { sql, type SQL } from "drizzle-orm";
import type { LogLevel } from "./run-log";

// What PgRunStore holds back for a run it executes inline (the embedded executor), to write it with a statement that
// goes anyway (finalize) or after DEFERRED_WRITE_MS: small node successes, log lines, and the RUNNING status of nodes
// that were started without a statement. Large outputs (a top-level array over SPILL_MIN_ITEMS) are never held: they
// are written by markNodeSucceeded (node-store.ts), which stores such arrays in pieces.

/** A node success held back: the columns markNodeSucceeded writes for a small output. */
export type HeldSuccess = {
  nodeId: string;
  output: Record<string, unknown>;
  itemsIn: number | null;
  itemsOut: number | null;
  /** When this process started the node without writing RUNNING (null: the row has its own started_at). */
  startedAt: Date | null;
  completedAt: Date;
};

/** A log line held back; `node`: written only together with that held success (none when its row was not written). */
export type HeldLine = { nodeId: string | null; level: LogLevel; message: string; withSuccessOf?: string };

/** What one statement writes for a run, in the order it was held. */
export type HeldBatch = { successes: HeldSuccess[]; lines: HeldLine[]; running: { nodeId: string; at: Date }[] };

export const isEmptyBatch = (batch: HeldBatch | undefined) =>
  !batch || (batch.successes.length === 0 && batch.lines.length === 0 && batch.running.length === 0);

/**
 * The batch as CTEs of a statement on the run: `held_done` (the node rows moved to SUCCESS; returns node_id, type,
 * status, error, row_count and filtered_out as finalize reads them), `held_running` and `held_logs`. Same columns as
 * markNodeSucceeded (status, output, spilled null, items, error null, completed_at, started_at) and markNodeRunning;
 * only rows that have not finished are written (a row another process finished meanwhile is left as it is, and so are
 * the log lines of that success). Log lines go in one insert, in the order they were held (run_logs.id orders them).
 * Times are the app's, never later than the database's now (its clock may run ahead). `finalLine`: the run's last log
 * line, written after the held ones in the same insert (so in that order) when `when` holds — one statement's CTEs
 * run in no set order, so two inserts would not keep it.
 */
export function heldCtes(runId: string, batch: HeldBatch, finalLine?: { level: LogLevel; message: string; when: SQL }): SQL {
  const done = JSON.stringify(
    batch.successes.map((s) => ({
      node_id: s.nodeId,
      output: s.output,
      items_in: s.itemsIn,
      items_out: s.itemsOut,
      started_at: s.startedAt?.toISOString() ?? null,
      completed_at: s.completedAt.toISOString(),
    })),
  );
  const running = JSON.stringify(batch.running.map((r) => ({ node_id: r.nodeId, at: r.at.toISOString() })));
  const lines = JSON.stringify(batch.lines.map((l) => ({ n: l.nodeId, l: l.level, m: l.message, w: l.withSuccessOf ?? null })));
  return sql`held_done as (
      update node_results n set status = 'SUCCESS', output = b.output, spilled = null, items_in = b.items_in,
        items_out = b.items_out, error = null,
        started_at = coalesce(n.started_at, least(coalesce(b.started_at, b.completed_at), now())),
        completed_at = greatest(least(b.completed_at, now()), coalesce(n.started_at, least(coalesce(b.started_at, b.completed_at), now())))
      from jsonb_to_recordset(${done}::jsonb) as b(node_id text, output jsonb, items_in int, items_out int, started_at timestamptz, completed_at timestamptz)
      where n.run_id = ${runId} and n.node_id = b.node_id and n.status in ('PENDING', 'RUNNING')
      returning n.node_id, n.type, n.status, n.error,
        case when n.type = 'DATA_SOURCE' then (n.output->>'rowCount')::int end as row_count,
        case when n.type = 'FILTER' then (n.output->>'filteredOut')::int end as filtered_out
    ), held_running as (
      update node_results n set status = 'RUNNING', started_at = coalesce(n.started_at, least(r.at, now()))
      from jsonb_to_recordset(${running}::jsonb) as r(node_id text, at timestamptz)
      where n.run_id = ${runId} and n.node_id = r.node_id and n.status = 'PENDING'
    ), held_logs as (
      insert into run_logs (run_id, level, node_id, message)
      select ${runId}, z.l, z.n, z.m from (
        select x.e->>'l' as l, x.e->>'n' as n, x.e->>'m' as m, x.o
        from jsonb_array_elements(${lines}::jsonb) with ordinality as x(e, o)
        where x.e->>'w' is null or x.e->>'w' in (select node_id from held_done)
        ${finalLine ? sql`union all select ${finalLine.level}, null, ${finalLine.message}, ${batch.lines.length + 1} where ${finalLine.when}` : sql``}
      ) z
      order by z.o
    )`;
}
