import { ok, route } from "@/lib/http/route";
import { listRunsQuery } from "@/lib/schemas/runs";
import { listRuns } from "@/lib/services/runs/list-runs";

export const dynamic = "force-dynamic";

// GET /api/workflows/:workflowId/runs – the workflow's runs, newest first
export const GET = route({ auth: true, query: listRunsQuery }, async ({ account, params, query }) =>
  ok(await listRuns(account.id, params.workflowId, query)),
);
