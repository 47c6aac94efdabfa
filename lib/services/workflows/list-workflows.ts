import "server-only";
import { and, desc, eq, inArray, isNull, sql } from "drizzle-orm";
import { getDb } from "@/db/client";
import { runs, workflows } from "@/db/schema";
import { decodeCursor, newestFirstAfter, page } from "@/lib/http/pagination";

/**
 * GET /api/workflows: most recently updated first, each with its node count and its latest run (by enqueue order).
 * `onlyWorkflowIds` (an API key confined to some workflows) hides every other workflow.
 */
export async function listWorkflows(accountId: string, query: { limit: number; cursor?: string }, onlyWorkflowIds?: readonly string[]) {
  const db = await getDb();
  const after = newestFirstAfter(decodeCursor(query.cursor), workflows.updatedAt, workflows.id);
  const rows = await db
    .select({
      id: workflows.id,
      name: workflows.name,
      version: workflows.version,
      createdAt: workflows.createdAt,
      updatedAt: workflows.updatedAt,
      nodeCount: sql<number>`case when jsonb_typeof(${workflows.graph}->'nodes') = 'array' then jsonb_array_length(${workflows.graph}->'nodes') else 0 end`.mapWith(Number),
    })
    .from(workflows)
    .where(and(
      eq(workflows.accountId, accountId),
      isNull(workflows.deletedAt),
      onlyWorkflowIds ? inArray(workflows.id, [...onlyWorkflowIds]) : undefined,
      after,
    ))
    .orderBy(desc(workflows.updatedAt), desc(workflows.id))
    .limit(query.limit + 1);
  const result = page(rows, query.limit, (row) => ({ k: row.updatedAt.toISOString(), id: row.id }));
  const lastRuns = await latestRuns(result.items.map((row) => row.id));
  return {
    items: result.items.map((row) => ({
      id: row.id,
      name: row.name,
      version: row.version,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
      nodeCount: row.nodeCount,
      lastRun: lastRuns.get(row.id) ?? null,
    })),
    nextCursor: result.nextCursor,
  };
}

async function latestRuns(workflowIds: string[]) {
  const latest = new Map<string, { runId: string; status: string; enqueuedAt: string }>();
  if (workflowIds.length === 0) return latest;
  const db = await getDb();
  const rows = await db
    .selectDistinctOn([runs.workflowId], { workflowId: runs.workflowId, id: runs.id, status: runs.status, enqueuedAt: runs.enqueuedAt })
    .from(runs)
    .where(inArray(runs.workflowId, workflowIds))
    .orderBy(runs.workflowId, desc(runs.seq));
  for (const row of rows) latest.set(row.workflowId, { runId: row.id, status: row.status, enqueuedAt: row.enqueuedAt.toISOString() });
  return latest;
}
