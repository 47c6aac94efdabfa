import "server-only";
import { and, desc, eq, inArray, type SQL } from "drizzle-orm";
import { getDb } from "@/db/client";
import { runs, workflows, type RunStatus } from "@/db/schema";
import { decodeCursor, descendingAfter, page } from "@/lib/http/pagination";
import { runSummaryColumns, runSummaryView } from "./get-run";

/**
 * GET /api/runs — the account's runs across workflows, newest first (by enqueue order: `seq` is unique), without node
 * outputs, each with its workflow's name. Runs of a deleted workflow stay listed (their history stays readable by
 * runId); `workflowName` is then the name it had. An unknown or another account's `workflowId` filter simply matches
 * nothing (an empty page, not a 404: a list filter is not a lookup). `onlyWorkflowIds` (an API key confined to some
 * workflows) hides the runs of every other workflow.
 */
export async function listAccountRuns(
  accountId: string,
  query: { status?: RunStatus; workflowId?: string; limit: number; cursor?: string },
  onlyWorkflowIds?: readonly string[],
) {
  const db = await getDb();
  const conditions: (SQL | undefined)[] = [eq(runs.accountId, accountId)];
  if (query.status) conditions.push(eq(runs.status, query.status));
  if (query.workflowId) conditions.push(eq(runs.workflowId, query.workflowId));
  if (onlyWorkflowIds) conditions.push(inArray(runs.workflowId, [...onlyWorkflowIds]));
  conditions.push(descendingAfter(decodeCursor(query.cursor), runs.seq));
  const rows = await db
    .select({ ...runSummaryColumns, seq: runs.seq, workflowName: workflows.name })
    .from(runs)
    .innerJoin(workflows, eq(workflows.id, runs.workflowId))
    .where(and(...conditions))
    .orderBy(desc(runs.seq))
    .limit(query.limit + 1);
  const result = page(rows, query.limit, (r) => ({ k: r.seq, id: r.id }));
  return {
    items: result.items.map((r) => ({ ...runSummaryView(r), workflowName: r.workflowName })),
    nextCursor: result.nextCursor,
  };
}
