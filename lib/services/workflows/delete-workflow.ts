import "server-only";
import { and, eq, isNull } from "drizzle-orm";
import { getDb } from "@/db/client";
import { runs, workflows } from "@/db/schema";
import { WORKFLOW_DELETED_RUN_ERROR } from "@/lib/engine/pg/queue";
import { AppError } from "@/lib/http/errors";

export const WORKFLOW_DELETED_ERROR = WORKFLOW_DELETED_RUN_ERROR;

/**
 * Soft delete: the row stays so its runs remain readable by runId. Runs still waiting to start are failed in the
 * same transaction, so no executor picks one up for a workflow that no longer exists.
 *
 * Enqueues read the workflow row FOR SHARE in the statement that inserts the run, and the UPDATE below takes that
 * row's lock first: an enqueue either commits its run before the delete's second statement (which then sees and
 * fails it) or waits for the delete and finds the workflow deleted (404). A run inserted any other way is failed by
 * the claim, which never starts a deleted workflow's run.
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
