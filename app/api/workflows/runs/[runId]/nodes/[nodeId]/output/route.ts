import { ok, route } from "@/lib/http/route";
import { nodeOutputQuery } from "@/lib/schemas/runs";
import { getNodeOutputPage } from "@/lib/services/runs/get-node-output";

export const dynamic = "force-dynamic";

// GET /api/workflows/runs/:runId/nodes/:nodeId/output – a page of a large output array
export const GET = route({ auth: true, query: nodeOutputQuery }, async ({ account, params, query }) =>
  ok(await getNodeOutputPage(account.id, params.runId, params.nodeId, query)),
);
