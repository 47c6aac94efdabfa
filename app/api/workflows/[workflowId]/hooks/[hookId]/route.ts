import { noContent, route } from "@/lib/http/route";
import { deleteHook } from "@/lib/services/hooks/manage-hooks";

// DELETE /api/workflows/:workflowId/hooks/:hookId – revoke a hook: its URL answers 404 from now on
export const DELETE = route({ auth: true }, async ({ account, params }) => {
  await deleteHook(account.id, params.workflowId, params.hookId);
  return noContent();
});
