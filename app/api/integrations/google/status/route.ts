import { getGoogleStatus } from "@/lib/google/links";
import { assertGoogleConfigured } from "@/lib/google/oauth-client";
import { ok, route } from "@/lib/http/route";

// GET /api/integrations/google/status – whether a Google account is linked (503 when this server has no Google client)
export const GET = route({ auth: true }, async ({ account }) => {
  assertGoogleConfigured();
  return ok(await getGoogleStatus(account.id));
});
