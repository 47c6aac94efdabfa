import "server-only";
import { and, desc, eq, sql } from "drizzle-orm";
import { getDb } from "@/db/client";
import { workflowVersions } from "@/db/schema";
import { decodeCursor, descendingAfter, page } from "@/lib/http/pagination";
import { findOwnWorkflow } from "./get-workflow";

const nodeCount = sql<number>`case when jsonb_typeof(${workflowVersions.graph}->'nodes') = 'array' then jsonb_array_length(${workflowVersions.graph}->'nodes') else 0 end`.mapWith(Number);

/** GET /api/workflows/:id/versions: every stored graph of the workflow, newest first (keyset cursor on the version). */
export async function listWorkflowVersions(accountId: string, workflowId: string, query: { limit: number; cursor?: string }) {
  const db = await getDb();
  await findOwnWorkflow(db, accountId, workflowId);
  const after = descendingAfter(decodeCursor(query.cursor), workflowVersions.version);
  const rows = await db
    .select({ version: workflowVersions.version, name: workflowVersions.name, nodeCount, createdAt: workflowVersions.createdAt })
    .from(workflowVersions)
    .where(and(eq(workflowVersions.workflowId, workflowId), after))
    .orderBy(desc(workflowVersions.version))
    .limit(query.limit + 1);
  const result = page(rows, query.limit, (row) => ({ k: row.version, id: String(row.version) }));
  return {
    items: result.items.map((row) => ({ version: row.version, name: row.name, nodeCount: row.nodeCount, createdAt: row.createdAt.toISOString() })),
    nextCursor: result.nextCursor,
  };
}
