import { startGoogleConnect } from "@/lib/google/connect";
import { route } from "@/lib/http/route";

// GET /api/integrations/google/connect – redirect to Google's consent page for the signed-in account, binding the
// attempt to this browser with a short-lived cookie (only this browser can finish it)
export const GET = route({ auth: true }, async ({ account }) => {
  const { location, cookie } = await startGoogleConnect(account.id);
  return new Response(null, { status: 302, headers: { Location: location, "Set-Cookie": cookie, "Cache-Control": "no-store" } });
});
