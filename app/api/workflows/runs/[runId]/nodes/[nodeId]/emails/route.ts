import { ok, route } from "@/lib/http/route";
import { runEmailsQuery } from "@/lib/schemas/sending";
import { listRunEmails } from "@/lib/services/runs/list-run-emails";

export const dynamic = "force-dynamic";

// GET /api/workflows/runs/:runId/nodes/:nodeId/emails – the emails of an OUTPUT node, by status, with counts
export const GET = route({ auth: true, query: runEmailsQuery }, async ({ account, params, query }) =>
  ok(await listRunEmails(account.id, params.runId, params.nodeId, query)),
);
