import "server-only";
import { and, eq, getTableColumns, sql, type SQL } from "drizzle-orm";
import { execRows, getDb, type Db } from "@/db/client";
import { runLogs, runs, type NodeStatus } from "@/db/schema";
import { notFound } from "@/lib/errors";
import { assemblePreview, previewExprs, truncateArrays, type PreviewRow } from "./truncate-output";

export const OUTPUT_PREVIEW_ITEMS = 100;

type RunRow = typeof runs.$inferSelect;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The columns `runSummaryView` reads (the list selects only these: not the graph snapshot). */
export const runSummaryColumns = {
  id: runs.id,
  workflowId: runs.workflowId,
  workflowVersion: runs.workflowVersion,
  status: runs.status,
  result: runs.result,
  error: runs.error,
  enqueuedAt: runs.enqueuedAt,
  startedAt: runs.startedAt,
  completedAt: runs.completedAt,
  trigger: runs.trigger,
  mode: runs.mode,
  retryOf: runs.retryOf,
  sendOf: runs.sendOf,
  resendOf: runs.resendOf,
  cancelRequestedAt: runs.cancelRequestedAt,
  outputsExpiredAt: runs.outputsExpiredAt,
  /** 1 = next to start; counted on the (workflow_id, status, seq) index. Null unless PENDING. */
  queuePosition: sql<number | null>`case when ${runs.status} = 'PENDING' then (
    select count(*)::int from runs q where q.workflow_id = "runs"."workflow_id" and q.status = 'PENDING' and q.seq <= "runs"."seq") end`,
};

/** The run's fields shared by the full view and the list (no node outputs). */
type SummaryRow = Pick<RunRow, Exclude<keyof typeof runSummaryColumns, "queuePosition">> & { queuePosition: number | null };

export function runSummaryView(run: SummaryRow) {
  return {
    runId: run.id,
    workflowId: run.workflowId,
    workflowVersion: run.workflowVersion,
    status: run.status,
    trigger: run.trigger,
    mode: run.mode,
    ...(run.retryOf ? { retryOf: run.retryOf } : {}),
    ...(run.sendOf ? { sendOf: run.sendOf } : {}),
    ...(run.resendOf ? { resendOf: run.resendOf } : {}),
    ...(run.status === "PENDING" && run.queuePosition !== null ? { queuePosition: Number(run.queuePosition) } : {}),
    ...(run.status === "RUNNING" && run.cancelRequestedAt ? { cancelRequested: true } : {}),
    ...(run.outputsExpiredAt ? { outputExpired: true } : {}),
    ...(run.result && (run.status === "SUCCESS" || run.status === "FAILED") ? { result: run.result } : {}),
    ...(run.status === "FAILED" && run.error ? { error: run.error } : {}),
    enqueuedAt: run.enqueuedAt.toISOString(),
    startedAt: iso(run.startedAt),
    completedAt: iso(run.completedAt),
  };
}

export async function findAccountRun(accountId: string, runId: string): Promise<RunRow & { queuePosition: number | null }> {
  const db = await getDb();
  const [run] = await db
    .select({ ...getTableColumns(runs), queuePosition: runSummaryColumns.queuePosition })
    .from(runs)
    .where(and(eq(runs.id, runId), eq(runs.accountId, accountId)));
  if (!run) throw notFound("Run");
  return run;
}

/** GET /api/workflows/runs/:runId — node results as a map (default) or an array with `id` and `type`. */
export async function getRun(accountId: string, runId: string, form: "map" | "array") {
  const db = await getDb();
  // The run, its node results and its logs in one statement, so one snapshot: a run read as finished was finished by
  // a statement that also wrote its last node statuses and its last log line (finalize-run.ts), so its nodes and logs
  // are complete (read in separate statements side by side, a finished run could come with nodes still RUNNING). One
  // round trip also means one wait behind a big run's statement on PGlite's single connection instead of two.
  const [run] = await db
    .select({
      ...getTableColumns(runs),
      queuePosition: runSummaryColumns.queuePosition,
      nodeRows: sql<NodeRow[]>`(select coalesce(jsonb_agg(to_jsonb(v)), '[]'::jsonb) from (${nodeViewsQuery(sql`"runs"."id"`)}) v)`,
      logRows: sql<LogRow[]>`(select coalesce(jsonb_agg(jsonb_build_array(${isoText(sql`l.at`)}, l.level, l.node_id, l.message) order by l.id), '[]'::jsonb)
        from ${runLogs} l where l.run_id = "runs"."id")`,
    })
    .from(runs)
    .where(and(eq(runs.id, runId), eq(runs.accountId, accountId)));
  if (!run) throw notFound("Run");
  const nodeRows = await nodeViews(db, runId, run.nodeRows);
  const graphOrder = graphNodes(run.graph);
  const views = new Map(nodeRows);
  // A PENDING run has no node rows yet: show every node of its snapshot as PENDING.
  for (const node of graphOrder) {
    if (!views.has(node.id)) views.set(node.id, pendingView(node.type));
  }
  const ordered = graphOrder.map((n) => n.id).filter((id) => views.has(id));
  const nodes =
    form === "array"
      ? ordered.map((id) => ({ id, ...views.get(id)! }))
      : Object.fromEntries(ordered.map((id) => [id, views.get(id)!]));
  return {
    ...runSummaryView(run),
    nodes,
    logs: run.logRows.map(([at, level, nodeId, message]) => ({ at, level, ...(nodeId ? { nodeId } : {}), message })),
  };
}

/** A log line as the run view reads it: [at (ISO 8601, ms, Z), level, node id or null, message]. */
type LogRow = [string, "debug" | "info" | "warn" | "error", string | null, string];

function graphNodes(graph: unknown): { id: string; type: string }[] {
  const nodes = (graph as { nodes?: { id: string; type: string }[] } | null)?.nodes;
  return Array.isArray(nodes) ? nodes : [];
}

type NodeView = ReturnType<typeof pendingView> | ReturnType<typeof nodeView>;

type NodeRow = {
  node_id: string;
  type: string;
  status: NodeStatus;
  error: string | null;
  items_in: number | null;
  items_out: number | null;
  started_at: string | null;
  completed_at: string | null;
  reused: boolean;
  progress: { sent: number; total: number } | { done: number; total: number } | null;
  /** jsonb_typeof of the SUCCESS output ('{}' || output, so 'object' exactly when the output is an object). */
  root_t: string | null;
  /** The output itself when it is not an object (never written by the node types; previewed in JS). */
  raw: unknown;
  /** The output's top-level fields, in order: [key, type, length, preview (null when deep), deep]. */
  fields: [string, string, number | null, unknown, boolean][] | null;
};

type InsideRow = { node_id: string; path: string; key: string | null; t: string | null; len: number | null; v: unknown; deep: boolean };

/** A timestamp as Date#toISOString writes it (UTC; the columns hold milliseconds: db/schema/columns.ts). */
const isoText = (column: SQL) => sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The node results of a run with their output previews: only the first OUTPUT_PREVIEW_ITEMS elements of each array
 * leave PostgreSQL (see truncate-output.ts). One row per node, its top-level fields previewed in one jsonb array.
 * `runId`: the run's id (the outer query's column: the run view reads the rows as one jsonb array with the run).
 *
 * Shaped for the cost of a large output: it is detoasted once (`o`), its fields are taken with `o -> key` (a copy;
 * jsonb_each would also write tens of MB to a temporary file past work_mem), and there is no lateral join on it
 * (see previewExprs). No recursive CTE either: its estimate (~1M rows) would make PostgreSQL JIT-compile the
 * statement, ~20 ms on every poll; fields with a longer array deeper down take a second statement (loadInside).
 */
function nodeViewsQuery(runId: SQL): SQL {
  const max = OUTPUT_PREVIEW_ITEMS;
  const field = previewExprs(sql`e.value`, sql`1`, max);
  return sql`select s.node_id, s.type, s.status, s.error, s.items_in, s.items_out, s.started_at, s.completed_at, s.reused, s.progress,
               jsonb_typeof(s.o) as root_t, case when jsonb_typeof(s.o) <> 'object' then s.output end as raw,
               (select jsonb_agg(jsonb_build_array(e.key, ${field.t}, ${field.len}, case when ${field.deep} then null else ${field.p} end, ${field.deep})
                                 order by e.ord)
                from (select k.key, k.ord, s.o -> k.key as value
                      from jsonb_object_keys(case when jsonb_typeof(s.o) = 'object' then s.o end) with ordinality k(key, ord)
                      offset 0) e) as fields
        from (
          select n.node_id, n.type, n.status, n.error, n.items_in, n.items_out, n.output, n.reused, n.progress,
                 ${isoText(sql`n.started_at`)} as started_at, ${isoText(sql`n.completed_at`)} as completed_at,
                 case when n.status = 'SUCCESS' then '{}'::jsonb || n.output end as o
          from node_results n where n.run_id = ${runId} offset 0
        ) s`;
}

/** The views of the node rows read with the run (nodeViewsQuery), with the deeper previews of AI outputs. */
async function nodeViews(db: Db, runId: string, nodeRows: NodeRow[]): Promise<[string, NodeView][]> {
  const deepFields = nodeRows.flatMap((row) =>
    row.root_t === "object" ? (row.fields ?? []).flatMap(([key, , , , deep], i) => (deep ? [{ node_id: row.node_id, key, ord: i + 1 }] : [])) : [],
  );
  const inside = new Map<string, PreviewRow[]>();
  for (const row of deepFields.length > 0 ? await loadInside(db, runId, deepFields) : []) {
    const list = inside.get(row.node_id) ?? [];
    list.push({ ord: row.path.split(".").map(Number), key: row.key, t: row.t, len: row.len, v: row.deep ? undefined : row.v });
    inside.set(row.node_id, list);
  }
  return nodeRows.map((row) => {
    const tree: PreviewRow[] = (row.fields ?? []).map(([key, t, len, v, deep], i) => ({ ord: [i + 1], key, t, len, v: deep ? undefined : v }));
    tree.push(...(inside.get(row.node_id) ?? []));
    return [row.node_id, nodeView(row, tree)];
  });
}

/**
 * The inside of top-level fields whose preview still holds an array longer than OUTPUT_PREVIEW_ITEMS (AI outputs):
 * a recursive walk that previews each level the same way and descends only into the values that need it. The
 * children of a value come from one function scan (an array's preview is turned into an object keyed by index),
 * which keeps the planner's estimate under the JIT threshold.
 */
async function loadInside(db: Db, runId: string, fields: { node_id: string; key: string; ord: number }[]): Promise<InsideRow[]> {
  const max = OUTPUT_PREVIEW_ITEMS;
  const anchor = previewExprs(sql`e.value`, sql`1`, max);
  const child = previewExprs(sql`c.value`, sql`w.depth + 1`, max);
  return execRows<InsideRow>(
    db,
    sql`with recursive tree(node_id, ord, depth, key, t, len, p, deep) as (
      select e.node_id, array[e.ord], 1, e.key, ${anchor.t}, ${anchor.len}, ${anchor.p}, ${anchor.deep}
      from (
        select d.node_id, d.ord, d.key, n.output -> d.key as value
        from node_results n
        join jsonb_to_recordset(${JSON.stringify(fields)}::jsonb) as d(node_id text, key text, ord int) on d.node_id = n.node_id
        where n.run_id = ${runId} and n.status = 'SUCCESS'
        offset 0
      ) e
      union all
      select w.node_id, w.ord || (case when w.t = 'array' then c.key::int + 1 else c.ord::int end), w.depth + 1,
             case when w.t = 'object' then c.key end, ${child.t}, ${child.len}, ${child.p}, ${child.deep}
      from tree w
      cross join lateral jsonb_each(case when w.t = 'object' then w.p
                                         else (select jsonb_object_agg(x.i - 1, x.value) from jsonb_array_elements(w.p) with ordinality x(value, i))
                                    end) with ordinality c(key, value, ord)
      where w.deep
    )
    select node_id, array_to_string(ord, '.') as path, key, t, len, case when deep then null else p end as v, deep
    from tree where depth > 1`,
  );
}

function nodeView(row: NodeRow, tree: PreviewRow[]) {
  let preview: { value: unknown; truncated: boolean } = { value: null, truncated: false };
  if (row.root_t === "object") preview = assemblePreview(tree, OUTPUT_PREVIEW_ITEMS);
  else if (row.raw) preview = truncateArrays(row.raw, OUTPUT_PREVIEW_ITEMS);
  const success = row.status === "SUCCESS";
  return {
    type: row.type,
    status: row.status,
    output: success ? (preview.value as Record<string, unknown> | null) : null,
    outputTruncated: success && preview.truncated,
    error: row.error,
    startedAt: row.started_at,
    completedAt: row.completed_at,
    ...(row.items_in !== null ? { itemsIn: row.items_in } : {}),
    ...(row.items_out !== null ? { itemsOut: row.items_out } : {}),
    ...(row.reused ? { reused: true } : {}),
    ...(row.progress && row.status === "RUNNING" ? { progress: row.progress } : {}),
  };
}

function pendingView(type: string) {
  return { type, status: "PENDING" as const, output: null, outputTruncated: false, error: null, startedAt: null, completedAt: null };
}
