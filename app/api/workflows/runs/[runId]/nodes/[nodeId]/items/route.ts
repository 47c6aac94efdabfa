import { ok, route } from "@/lib/http/route";
import { aiItemsQuery } from "@/lib/schemas/ai";
import { listAiItems } from "@/lib/services/runs/list-ai-items";

export const dynamic = "force-dynamic";

// GET /api/workflows/runs/:runId/nodes/:nodeId/items – the items of an AI node with forEach, by status, with counts
export const GET = route({ auth: true, query: aiItemsQuery }, async ({ account, params, query }) =>
  ok(await listAiItems(account.id, params.runId, params.nodeId, query)),
);
