import { bearerToken } from "@/lib/auth/authenticate";
import { authorize } from "@/lib/http/authorize";
import { accepted, route } from "@/lib/http/route";
import { enqueueRun, enqueueRunWithToken } from "@/lib/engine";
import { assertUntilNode, hasRunBody, readRunRequest } from "@/lib/services/runs/run-request";

export const dynamic = "force-dynamic";

// POST /api/workflows/:workflowId/run – enqueue a run (202 at once; poll the Location); optional JSON body
// `{ mode: "preview" | "live", until? }`
// Authenticated here rather than by route(): a bodiless Bearer request (access token or API key) without
// Idempotency-Key (the hot path) checks its account inside the enqueue statement; every other request is authorized
// first, as route({ auth: true }) would.
export const POST = route({ auth: false }, async ({ params, req, url }) => {
  const idempotencyKey = req.headers.get("idempotency-key") ?? undefined;
  const token = bearerToken(req);
  const withBody = hasRunBody(req);
  if (token !== null && idempotencyKey === undefined && !withBody) {
    const { run, headers } = await enqueueRunWithToken(token, params.workflowId);
    return accepted(run, { ...headers, Location: `/api/workflows/runs/${run.runId}` });
  }
  const accountId = (await authorize(req, url.pathname, params)).id;
  const options = withBody ? await readRunRequest(req) : undefined;
  if (options) await assertUntilNode(accountId, params.workflowId, options);
  const { run, headers } = await enqueueRun(accountId, params.workflowId, idempotencyKey, options);
  return accepted(run, { ...headers, Location: `/api/workflows/runs/${run.runId}` });
});
