import "server-only";
import { and, desc, eq, isNull, type SQL } from "drizzle-orm";
import { getDb } from "@/db/client";
import { runs, workflows, type RunStatus } from "@/db/schema";
import { notFound } from "@/lib/errors";
import { decodeCursor, descendingAfter, page } from "@/lib/http/pagination";
import { runSummaryColumns, runSummaryView } from "./get-run";

/** GET /api/workflows/:workflowId/runs — newest first (by enqueue order), without node outputs. */
export async function listRuns(
  accountId: string,
  workflowId: string,
  query: { status?: RunStatus; limit: number; cursor?: string },
) {
  const db = await getDb();
  // Runs of a deleted workflow stay readable by runId, but the workflow itself is gone from the API.
  const [workflow] = await db
    .select({ id: workflows.id })
    .from(workflows)
    .where(and(eq(workflows.id, workflowId), eq(workflows.accountId, accountId), isNull(workflows.deletedAt)));
  if (!workflow) throw notFound("Workflow");
  // `seq` is unique: it alone orders the page and keys the cursor.
  const conditions: (SQL | undefined)[] = [eq(runs.workflowId, workflowId), eq(runs.accountId, accountId)];
  if (query.status) conditions.push(eq(runs.status, query.status));
  conditions.push(descendingAfter(decodeCursor(query.cursor), runs.seq));
  const rows = await db
    .select({ ...runSummaryColumns, seq: runs.seq })
    .from(runs)
    .where(and(...conditions))
    .orderBy(desc(runs.seq))
    .limit(query.limit + 1);
  const result = page(rows, query.limit, (r) => ({ k: r.seq, id: r.id }));
  return { items: result.items.map(runSummaryView), nextCursor: result.nextCursor };
}
