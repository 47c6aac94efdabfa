import { clearedBindingCookie, completeGoogleConnect } from "@/lib/google/connect";
import { route } from "@/lib/http/route";

// GET /api/integrations/google/callback – Google sends the browser back here; the signed state names the account and
// must match this browser's binding cookie
export const GET = route({ auth: false }, async ({ req, url }) => {
  const location = await completeGoogleConnect({
    code: url.searchParams.get("code"),
    state: url.searchParams.get("state"),
    error: url.searchParams.get("error"),
    req,
  });
  return new Response(null, {
    status: 302,
    headers: { Location: location, "Set-Cookie": clearedBindingCookie(), "Cache-Control": "no-store" },
  });
});
