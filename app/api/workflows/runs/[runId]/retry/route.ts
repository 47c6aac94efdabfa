import { accepted, route } from "@/lib/http/route";
import { retryRun } from "@/lib/services/runs/retry-run";

export const dynamic = "force-dynamic";

// POST /api/workflows/runs/:runId/retry – a new run reusing the FAILED run's successful nodes (202)
export const POST = route({ auth: true }, async ({ account, params }) => {
  const run = await retryRun(account.id, params.runId);
  return accepted(run, { Location: `/api/workflows/runs/${run.runId}` });
});
