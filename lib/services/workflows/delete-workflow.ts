import "server-only";
import { and, eq, isNull } from "drizzle-orm";
import { getDb } from "@/db/client";
import { runs, workflows } from "@/db/schema";
import { AppError } from "@/lib/http/errors";

export const WORKFLOW_DELETED_ERROR = "Workflow deleted";

/**
 * Soft delete: the row stays so its runs remain readable by runId. Runs still waiting to start are failed in the
 * same transaction, so no executor picks one up for a workflow that no longer exists.
 */
export async function deleteWorkflow(accountId: string, workflowId: string): Promise<void> {
  const db = await getDb();
  await db.transaction(async (tx) => {
    const now = new Date();
    const deleted = await tx
      .update(workflows)
      .set({ deletedAt: now })
      .where(and(eq(workflows.id, workflowId), eq(workflows.accountId, accountId), isNull(workflows.deletedAt)))
      .returning({ id: workflows.id });
    if (deleted.length === 0) throw new AppError("not_found", "Workflow not found");
    await tx
      .update(runs)
      .set({ status: "FAILED", error: WORKFLOW_DELETED_ERROR, completedAt: now })
      .where(and(eq(runs.workflowId, workflowId), eq(runs.status, "PENDING")));
  });
}
