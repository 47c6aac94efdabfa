import "server-only";
import { and, eq, isNull } from "drizzle-orm";
import { getDb, type Db, type Tx } from "@/db/client";
import { workflows } from "@/db/schema";
import { AppError } from "@/lib/errors";
import { toWorkflowView, type WorkflowView } from "./workflow-view";

/** The account's live workflow row; another account's or a deleted one is "not found" (no existence leak). */
export async function findOwnWorkflow(db: Db | Tx, accountId: string, workflowId: string, options: { forUpdate?: boolean } = {}) {
  const query = db
    .select()
    .from(workflows)
    .where(and(eq(workflows.id, workflowId), eq(workflows.accountId, accountId), isNull(workflows.deletedAt)));
  const [row] = options.forUpdate ? await query.for("update") : await query;
  if (!row) throw new AppError("not_found", "Workflow not found");
  return row;
}

export async function getWorkflow(accountId: string, workflowId: string): Promise<WorkflowView> {
  return toWorkflowView(await findOwnWorkflow(await getDb(), accountId, workflowId));
}
