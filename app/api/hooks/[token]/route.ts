import { accepted, route } from "@/lib/http/route";
import { receiveHookDelivery } from "@/lib/services/hooks/receive-hook-delivery";

export const dynamic = "force-dynamic";

// POST /api/hooks/:token – an inbound hook delivery: any JSON body starts a run of the hook's workflow (202 { runId })
// No account auth: the token in the URL is the secret. The body is read by the service so that refused deliveries
// (too large, not JSON) are recorded in the hook's last deliveries too.
export const POST = route({ auth: false }, async ({ params, req }) => {
  const { runId, headers } = await receiveHookDelivery(params.token, req);
  return accepted({ runId }, headers);
});
