import { accepted, route } from "@/lib/http/route";
import { cancelRun } from "@/lib/engine";

export const dynamic = "force-dynamic";

// POST /api/workflows/runs/:runId/cancel – PENDING: FAILED "Cancelled" at once; RUNNING: stops at its next step (202)
export const POST = route({ auth: true }, async ({ account, params }) => accepted(await cancelRun(account.id, params.runId)));
