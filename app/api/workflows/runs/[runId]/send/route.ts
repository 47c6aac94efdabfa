import { accepted, route } from "@/lib/http/route";
import { sendPreview } from "@/lib/services/runs/send-preview";

export const dynamic = "force-dynamic";

// POST /api/workflows/runs/:runId/send – send exactly what a SUCCESS preview rendered (202, a new live run)
export const POST = route({ auth: true }, async ({ account, params }) => {
  const run = await sendPreview(account.id, params.runId);
  return accepted(run, { Location: `/api/workflows/runs/${run.runId}` });
});
