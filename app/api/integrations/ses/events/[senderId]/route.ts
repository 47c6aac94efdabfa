import { ok, readTextLimited, route } from "@/lib/http/route";
import { handleSesEvent } from "@/lib/services/suppressions/handle-ses-event";

export const dynamic = "force-dynamic";

// POST /api/integrations/ses/events/:senderId – an SES sender's bounces and complaints through Amazon SNS (signed)
export const POST = route({ auth: false }, async ({ req, params }) =>
  ok(await handleSesEvent(params.senderId, await readTextLimited(req, 256 * 1024))),
);
