import { ok, readTextLimited, route } from "@/lib/http/route";
import { handleResendEvent } from "@/lib/services/suppressions/handle-resend-event";

export const dynamic = "force-dynamic";

// POST /api/integrations/resend/events – Resend's event webhook (Svix signature over the raw body)
export const POST = route({ auth: false }, async ({ req }) =>
  ok(await handleResendEvent(await readTextLimited(req, 256 * 1024), req.headers)),
);
