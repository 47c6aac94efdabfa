import { getGoogleStatus } from "@/lib/google/links";
import { ok, route } from "@/lib/http/route";

// GET /api/integrations/google/status – whether a Google account is linked ({ connected: false, configured: false }
// when this server has no Google client)
export const GET = route({ auth: true }, async ({ account }) => ok(await getGoogleStatus(account.id)));
