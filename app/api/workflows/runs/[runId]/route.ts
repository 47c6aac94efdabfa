import { ok, route } from "@/lib/http/route";
import { getRunQuery } from "@/lib/schemas/runs";
import { getRun } from "@/lib/services/runs/get-run";

export const dynamic = "force-dynamic";

// GET /api/workflows/runs/:runId – the run with node results (map, or ?nodes=array) and logs
export const GET = route({ auth: true, query: getRunQuery }, async ({ account, params, query }) =>
  ok(await getRun(account.id, params.runId, query.nodes)),
);
