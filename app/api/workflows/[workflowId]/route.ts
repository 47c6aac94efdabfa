import { noContent, ok, route } from "@/lib/http/route";
import { updateWorkflowBody, workflowIdParams } from "@/lib/schemas/workflows";
import { deleteWorkflow } from "@/lib/services/workflows/delete-workflow";
import { getWorkflow } from "@/lib/services/workflows/get-workflow";
import { updateWorkflow } from "@/lib/services/workflows/update-workflow";

export const dynamic = "force-dynamic";

// GET /api/workflows/:workflowId – one workflow with its graph
export const GET = route({ auth: true, params: workflowIdParams }, async ({ account, params }) =>
  ok(await getWorkflow(account.id, params.workflowId)));

// PATCH /api/workflows/:workflowId – rename and/or replace the graph
export const PATCH = route({ auth: true, params: workflowIdParams, body: updateWorkflowBody }, async ({ account, params, body }) =>
  ok(await updateWorkflow(account.id, params.workflowId, body)));

// DELETE /api/workflows/:workflowId – soft delete; pending runs fail with "Workflow deleted"
export const DELETE = route({ auth: true, params: workflowIdParams }, async ({ account, params }) => {
  await deleteWorkflow(account.id, params.workflowId);
  return noContent();
});
