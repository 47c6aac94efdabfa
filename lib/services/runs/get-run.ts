import "server-only";
import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import { execRows, getDb, type Db } from "@/db/client";
import { runLogs, runs, type NodeStatus } from "@/db/schema";
import { notFound } from "@/lib/http/errors";
import { assemblePreview, previewExprs, truncateArrays, type PreviewRow } from "./truncate-output";

export const OUTPUT_PREVIEW_ITEMS = 100;

type RunRow = typeof runs.$inferSelect;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The run's fields shared by the full view and the list (no node outputs). */
export function runSummaryView(run: RunRow) {
  return {
    runId: run.id,
    workflowId: run.workflowId,
    workflowVersion: run.workflowVersion,
    status: run.status,
    ...(run.result && (run.status === "SUCCESS" || run.status === "FAILED") ? { result: run.result } : {}),
    ...(run.status === "FAILED" && run.error ? { error: run.error } : {}),
    enqueuedAt: run.enqueuedAt.toISOString(),
    startedAt: iso(run.startedAt),
    completedAt: iso(run.completedAt),
  };
}

export async function findAccountRun(accountId: string, runId: string): Promise<RunRow> {
  const db = await getDb();
  const [run] = await db.select().from(runs).where(and(eq(runs.id, runId), eq(runs.accountId, accountId)));
  if (!run) throw notFound("Run");
  return run;
}

/** GET /api/workflows/runs/:runId — node results as a map (default) or an array with `id` and `type`. */
export async function getRun(accountId: string, runId: string, form: "map" | "array") {
  const run = await findAccountRun(accountId, runId);
  const db = await getDb();
  const [nodeRows, logRows] = await Promise.all([
    loadNodeViews(db, runId),
    db.select().from(runLogs).where(eq(runLogs.runId, runId)).orderBy(asc(runLogs.id)),
  ]);
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
    logs: logRows.map((l) => ({ at: l.at.toISOString(), level: l.level, ...(l.nodeId ? { nodeId: l.nodeId } : {}), message: l.message })),
  };
}

function graphNodes(graph: unknown): { id: string; type: string }[] {
  const nodes = (graph as { nodes?: { id: string; type: string }[] } | null)?.nodes;
  return Array.isArray(nodes) ? nodes : [];
}

type NodeView = ReturnType<typeof pendingView> | ReturnType<typeof nodeView>;

type PreviewQueryRow = {
  node_id: string;
  /** 0: the node (its fields, the others null); 1: a value inside a field (`path` and the columns after it). */
  kind: number;
  type: string | null;
  status: NodeStatus | null;
  error: string | null;
  items_in: number | null;
  items_out: number | null;
  started_at: string | null;
  completed_at: string | null;
  /** jsonb_typeof of the SUCCESS output ('{}' || output, so 'object' exactly when the output is an object). */
  root_t: string | null;
  /** The output itself when it is not an object (never written by the node types; previewed in JS). */
  raw: unknown;
  /** The output's top-level fields, in order: [key, type, length, preview (null when deep), deep]. */
  fields: [string, string, number | null, unknown, boolean][] | null;
  path: string | null;
  key: string | null;
  t: string | null;
  len: number | null;
  v: unknown;
  deep: boolean | null;
};

const isoText = (column: SQL) => sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The node results of a run with their output previews, in one statement: only the first OUTPUT_PREVIEW_ITEMS
 * elements of each array leave PostgreSQL (see truncate-output.ts). One row per node (its top-level fields in one
 * jsonb array), plus one row per value inside a field that holds a longer array deeper down.
 *
 * Shaped for the cost of a large output: it is detoasted once (`o`), its fields are taken with `o -> key` (a copy;
 * jsonb_each would also write tens of MB to a temporary file past work_mem), and there is no lateral join on it
 * (see previewExprs).
 */
async function loadNodeViews(db: Db, runId: string): Promise<[string, NodeView][]> {
  const max = OUTPUT_PREVIEW_ITEMS;
  const top = previewExprs(sql`e.value`, sql`1`, max);
  const inner = previewExprs(sql`c.v`, sql`w.depth + 1`, max);
  const rows = await execRows<PreviewQueryRow>(
    db,
    sql`with recursive top as (
      select s.node_id, s.type, s.status, s.error, s.items_in, s.items_out, s.started_at, s.completed_at,
             jsonb_typeof(s.o) as root_t, case when jsonb_typeof(s.o) <> 'object' then s.output end as raw,
             (select jsonb_agg(jsonb_build_array(e.key, ${top.t}, ${top.len}, ${top.p}, ${top.deep}) order by e.ord)
              from (select k.key, k.ord, s.o -> k.key as value
                    from jsonb_object_keys(case when jsonb_typeof(s.o) = 'object' then s.o end) with ordinality k(key, ord)
                    offset 0) e) as fields
      from (
        select n.node_id, n.type, n.status, n.error, n.items_in, n.items_out, n.output,
               ${isoText(sql`n.started_at`)} as started_at, ${isoText(sql`n.completed_at`)} as completed_at,
               case when n.status = 'SUCCESS' then '{}'::jsonb || n.output end as o
        from node_results n where n.run_id = ${runId} offset 0
      ) s
    ), tree(node_id, ord, depth, key, t, len, p, deep) as (
      select top.node_id, array[f.ord::int], 1, f.e ->> 0, f.e ->> 1, (f.e ->> 2)::int, f.e -> 3, true
      from top cross join lateral jsonb_array_elements(top.fields) with ordinality f(e, ord)
      where (f.e ->> 4)::boolean
      union all
      select w.node_id, w.ord || c.ord::int, w.depth + 1, c.key, ${inner.t}, ${inner.len}, ${inner.p}, ${inner.deep}
      from tree w
      cross join lateral (
        select k.key, k.value as v, k.ord from jsonb_each(case when w.t = 'object' then w.p end) with ordinality k(key, value, ord)
        union all
        select null::text, a.value, a.ord from jsonb_array_elements(case when w.t = 'array' then w.p end) with ordinality a(value, ord)
      ) c
      where w.deep
    )
    select 0 as kind, node_id, type, status, error, items_in, items_out, started_at, completed_at, root_t, raw,
           (select jsonb_agg(case when (x.e ->> 4)::boolean then jsonb_build_array(x.e -> 0, x.e -> 1, x.e -> 2, null, true) else x.e end
                             order by x.ord)
            from jsonb_array_elements(fields) with ordinality x(e, ord)) as fields,
           null::text as path, null::text as key, null::text as t, null::int as len, null::jsonb as v, null::boolean as deep
    from top
    union all
    select 1, node_id, null, null, null, null, null, null, null, null, null, null,
           array_to_string(ord, '.'), key, t, len, case when deep then null else p end, deep
    from tree where depth > 1`,
  );
  const inside = new Map<string, PreviewRow[]>();
  for (const row of rows) {
    if (row.kind !== 1) continue;
    const list = inside.get(row.node_id) ?? [];
    list.push({ ord: row.path!.split(".").map(Number), key: row.key, t: row.t, len: row.len, v: row.deep ? undefined : row.v });
    inside.set(row.node_id, list);
  }
  return rows
    .filter((row) => row.kind === 0)
    .map((row) => {
      const tree: PreviewRow[] = (row.fields ?? []).map(([key, t, len, v, deep], i) => ({ ord: [i + 1], key, t, len, v: deep ? undefined : v }));
      tree.push(...(inside.get(row.node_id) ?? []));
      return [row.node_id, nodeView(row, tree)];
    });
}

function nodeView(row: PreviewQueryRow, tree: PreviewRow[]) {
  let preview: { value: unknown; truncated: boolean } = { value: null, truncated: false };
  if (row.root_t === "object") preview = assemblePreview(tree, OUTPUT_PREVIEW_ITEMS);
  else if (row.raw) preview = truncateArrays(row.raw, OUTPUT_PREVIEW_ITEMS);
  const success = row.status === "SUCCESS";
  return {
    type: row.type ?? "",
    status: row.status ?? "PENDING",
    output: success ? (preview.value as Record<string, unknown> | null) : null,
    outputTruncated: success && preview.truncated,
    error: row.error,
    startedAt: row.started_at,
    completedAt: row.completed_at,
    ...(row.items_in !== null ? { itemsIn: row.items_in } : {}),
    ...(row.items_out !== null ? { itemsOut: row.items_out } : {}),
  };
}

function pendingView(type: string) {
  return { type, status: "PENDING" as const, output: null, outputTruncated: false, error: null, startedAt: null, completedAt: null };
}
