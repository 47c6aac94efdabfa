import { authenticate, bearerToken } from "@/lib/auth/authenticate";
import { accepted, route } from "@/lib/http/route";
import { enqueueRun, enqueueRunWithToken } from "@/lib/services/runs/enqueue-run";

export const dynamic = "force-dynamic";

// POST /api/workflows/:workflowId/run – enqueue a run (202 at once; poll the Location)
// Authenticated here rather than by route(): a Bearer request without Idempotency-Key (the hot path) checks its account
// inside the enqueue statement; every other request authenticates first, as route({ auth: true }) would.
export const POST = route({ auth: false }, async ({ params, req }) => {
  const idempotencyKey = req.headers.get("idempotency-key") ?? undefined;
  const token = bearerToken(req);
  const { run, headers } =
    token !== null && idempotencyKey === undefined
      ? await enqueueRunWithToken(token, params.workflowId)
      : await enqueueRun((await authenticate(req)).id, params.workflowId, idempotencyKey);
  return accepted(run, { ...headers, Location: `/api/workflows/runs/${run.runId}` });
});
