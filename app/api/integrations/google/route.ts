import { disconnectGoogleAccount } from "@/lib/google/disconnect";
import { noContent, route } from "@/lib/http/route";

// DELETE /api/integrations/google – unlink the Google account (revoked at Google, best effort)
export const DELETE = route({ auth: true }, async ({ account }) => {
  await disconnectGoogleAccount(account.id);
  return noContent();
});
