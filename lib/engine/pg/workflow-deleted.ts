import "server-only";
import { and, eq } from "drizzle-orm";
import type { Tx } from "@/db/client";
import { runs } from "@/db/schema";
import { WORKFLOW_DELETED_RUN_ERROR } from "./queue";

/**
 * A deleted workflow's runs that are still waiting to start are failed, in the transaction that deletes the workflow,
 * so no executor picks one up. Enqueues read the workflow row FOR SHARE in the statement that inserts the run, and
 * the delete's UPDATE takes that row's lock first: an enqueue either commits its run before this statement (which then
 * sees and fails it) or waits for the delete and finds the workflow deleted (404). A run inserted any other way is
 * failed by the claim, which never starts a deleted workflow's run.
 */
export async function failPendingRunsOfDeletedWorkflow(tx: Tx, workflowId: string, now: Date): Promise<void> {
  await tx
    .update(runs)
    .set({ status: "FAILED", error: WORKFLOW_DELETED_RUN_ERROR, completedAt: now })
    .where(and(eq(runs.workflowId, workflowId), eq(runs.status, "PENDING")));
}
