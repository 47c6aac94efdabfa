import { startGoogleConnect } from "@/lib/google/connect";
import { route } from "@/lib/http/route";

// GET /api/integrations/google/connect – redirect to Google's consent page for the signed-in account
export const GET = route({ auth: true }, async ({ account }) => {
  const location = await startGoogleConnect(account.id);
  return new Response(null, { status: 302, headers: { Location: location, "Cache-Control": "no-store" } });
});
