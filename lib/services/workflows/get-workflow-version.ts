import "server-only";
import { and, eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { workflowVersions } from "@/db/schema";
import { AppError } from "@/lib/errors";
import { findOwnWorkflow } from "./get-workflow";

/** GET /api/workflows/:id/versions/:version: the graph a version had (what a run of that version executed). */
export async function getWorkflowVersion(accountId: string, workflowId: string, version: number) {
  const db = await getDb();
  await findOwnWorkflow(db, accountId, workflowId);
  const [row] = await db
    .select()
    .from(workflowVersions)
    .where(and(eq(workflowVersions.workflowId, workflowId), eq(workflowVersions.version, version)));
  if (!row) throw new AppError("not_found", `Version ${version} of this workflow does not exist`);
  return { version: row.version, name: row.name, graph: row.graph, createdAt: row.createdAt.toISOString() };
}
