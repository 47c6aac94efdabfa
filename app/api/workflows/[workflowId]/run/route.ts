import { accepted, route } from "@/lib/http/route";
import { enqueueRun } from "@/lib/services/runs/enqueue-run";

export const dynamic = "force-dynamic";

// POST /api/workflows/:workflowId/run – enqueue a run (202 at once; poll the Location)
export const POST = route({ auth: true }, async ({ account, params, req }) => {
  const { run, headers } = await enqueueRun(account.id, params.workflowId, req.headers.get("idempotency-key") ?? undefined);
  return accepted(run, { ...headers, Location: `/api/workflows/runs/${run.runId}` });
});
