import "server-only";
import { and, eq, isNull } from "drizzle-orm";
import { getDb } from "@/db/client";
import { workflows } from "@/db/schema";
import { failPendingRunsOfDeletedWorkflow } from "@/lib/engine";
import { AppError } from "@/lib/errors";

/**
 * Soft delete: the row stays so its runs remain readable by runId. The engine fails the runs still waiting to start
 * in the same transaction (the lock order that keeps a concurrent enqueue out is explained there).
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
    await failPendingRunsOfDeletedWorkflow(tx, workflowId, now);
  });
}
