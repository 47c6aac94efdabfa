import { confinedWorkflowIds } from "@/lib/http/authorize";
import { noContent, route } from "@/lib/http/route";
import { deleteWebhook } from "@/lib/webhooks/manage-webhooks";

// DELETE /api/webhooks/:webhookId – delete a webhook (its pending deliveries are given up)
export const DELETE = route({ auth: true }, async ({ account, params }) => {
  await deleteWebhook(account.id, params.webhookId, confinedWorkflowIds(account));
  return noContent();
});
