import { confinedWorkflowIds } from "@/lib/http/authorize";
import { ok, route } from "@/lib/http/route";
import { webhookListQuery } from "@/lib/schemas/webhooks";
import { listDeliveries } from "@/lib/webhooks/manage-webhooks";

// GET /api/webhooks/:webhookId/deliveries – recent deliveries of a webhook, newest first
export const GET = route({ auth: true, query: webhookListQuery }, async ({ account, params, query }) =>
  ok(await listDeliveries(account.id, params.webhookId, query, confinedWorkflowIds(account))),
);
