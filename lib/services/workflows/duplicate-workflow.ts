import "server-only";
import { getDb } from "@/db/client";
import { workflows, workflowVersions } from "@/db/schema";
import { newId } from "@/lib/ids";
import { findOwnWorkflow } from "./get-workflow";
import { toWorkflowView, type WorkflowView } from "./workflow-view";

const NAME_MAX = 200;

/**
 * POST /api/workflows/:id/duplicate: "Copy of <name>" with the same graph, as version 1. Only the definition is
 * copied: no schedule, no hooks, no runs (a copy must never start sending on its own). The graph is not validated
 * again: it is a stored version already, and an upload deleted since then is reported when the copy is opened.
 */
export async function duplicateWorkflow(accountId: string, workflowId: string): Promise<WorkflowView> {
  const db = await getDb();
  const source = await findOwnWorkflow(db, accountId, workflowId);
  const now = new Date();
  const name = `Copy of ${source.name}`.slice(0, NAME_MAX);
  const row = { id: newId("wf"), accountId, name, graph: source.graph, version: 1, createdAt: now, updatedAt: now };
  await db.transaction(async (tx) => {
    await tx.insert(workflows).values(row);
    await tx.insert(workflowVersions).values({ workflowId: row.id, version: 1, name, graph: row.graph, createdAt: now });
  });
  return toWorkflowView(row);
}
