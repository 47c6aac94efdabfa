import { publicAppUrl } from "@/lib/config";
import { created, ok, route } from "@/lib/http/route";
import { createHook, listHooks } from "@/lib/services/hooks/manage-hooks";

// POST /api/workflows/:workflowId/hooks – create an inbound hook; its URL (with the secret token) is shown only here
export const POST = route({ auth: true }, async ({ account, params, req }) =>
  created(await createHook(account.id, params.workflowId, publicAppUrl(req))));

// GET /api/workflows/:workflowId/hooks – the workflow's hooks without tokens, each with its last deliveries
export const GET = route({ auth: true }, async ({ account, params }) => ok(await listHooks(account.id, params.workflowId)));
