import { accepted, route } from "@/lib/http/route";
import { resendUnknown } from "@/lib/services/runs/resend-unknown";

export const dynamic = "force-dynamic";

// POST /api/workflows/runs/:runId/resend-unknown – send again exactly the emails whose fate is unknown (202, a new live run)
export const POST = route({ auth: true }, async ({ account, params }) => {
  const run = await resendUnknown(account.id, params.runId);
  return accepted(run, { Location: `/api/workflows/runs/${run.runId}` });
});
