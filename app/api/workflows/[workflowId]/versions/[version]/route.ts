import { ok, route } from "@/lib/http/route";
import { workflowVersionParams } from "@/lib/schemas/workflows";
import { getWorkflowVersion } from "@/lib/services/workflows/get-workflow-version";

export const dynamic = "force-dynamic";

// GET /api/workflows/:workflowId/versions/:version – one version's name and graph
export const GET = route({ auth: true, params: workflowVersionParams }, async ({ account, params }) =>
  ok(await getWorkflowVersion(account.id, params.workflowId, params.version)));
