import "server-only";
import { and, asc, eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { nodeResults, runLogs, runs } from "@/db/schema";
import { notFound } from "@/lib/http/errors";
import { truncateArrays } from "./truncate-output";

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
    db.select().from(nodeResults).where(eq(nodeResults.runId, runId)),
    db.select().from(runLogs).where(eq(runLogs.runId, runId)).orderBy(asc(runLogs.id)),
  ]);
  const graphOrder = graphNodes(run.graph);
  const views = new Map(nodeRows.map((row) => [row.nodeId, nodeView(row)]));
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

function nodeView(row: typeof nodeResults.$inferSelect) {
  const { value, truncated } = row.output ? truncateArrays(row.output, OUTPUT_PREVIEW_ITEMS) : { value: null, truncated: false };
  return {
    type: row.type,
    status: row.status,
    output: row.status === "SUCCESS" ? (value as Record<string, unknown>) : null,
    outputTruncated: row.status === "SUCCESS" && truncated,
    error: row.error,
    startedAt: iso(row.startedAt),
    completedAt: iso(row.completedAt),
    ...(row.itemsIn !== null ? { itemsIn: row.itemsIn } : {}),
    ...(row.itemsOut !== null ? { itemsOut: row.itemsOut } : {}),
  };
}

function pendingView(type: string) {
  return { type, status: "PENDING" as const, output: null, outputTruncated: false, error: null, startedAt: null, completedAt: null };
}
