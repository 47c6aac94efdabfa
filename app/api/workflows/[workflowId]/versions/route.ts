import { ok, route } from "@/lib/http/route";
import { listWorkflowVersionsQuery, workflowIdParams } from "@/lib/schemas/workflows";
import { listWorkflowVersions } from "@/lib/services/workflows/list-workflow-versions";

export const dynamic = "force-dynamic";

// GET /api/workflows/:workflowId/versions – the stored versions of the graph, newest first
export const GET = route({ auth: true, params: workflowIdParams, query: listWorkflowVersionsQuery }, async ({ account, params, query }) =>
  ok(await listWorkflowVersions(account.id, params.workflowId, query)));
