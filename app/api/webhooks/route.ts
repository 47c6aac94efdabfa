import { confinedWorkflowIds } from "@/lib/http/authorize";
import { created, ok, route } from "@/lib/http/route";
import { createWebhookBody, webhookListQuery } from "@/lib/schemas/webhooks";
import { createWebhook, listWebhooks } from "@/lib/webhooks/manage-webhooks";

// POST /api/webhooks – register a URL for run events; the signing secret is shown only in this answer
export const POST = route({ auth: true, body: createWebhookBody }, async ({ account, body }) =>
  created(await createWebhook(account.id, body, confinedWorkflowIds(account))),
);

// GET /api/webhooks – the account's webhooks, newest first, without secrets
export const GET = route({ auth: true, query: webhookListQuery }, async ({ account, query }) =>
  ok(await listWebhooks(account.id, query, confinedWorkflowIds(account))),
);
