import { getGoogleStatus } from "@/lib/google/links";
import { ok, route } from "@/lib/http/route";

// GET /api/integrations/google/status – whether a Google account is linked
export const GET = route({ auth: true }, async ({ account }) => ok(await getGoogleStatus(account.id)));
