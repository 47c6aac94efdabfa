import { AppError } from "@/lib/errors";
import { ok, readTextLimited, route } from "@/lib/http/route";
import { unsubscribePage } from "@/lib/services/suppressions/unsubscribe-page";
import { checkUnsubscribeToken, unsubscribe } from "@/lib/services/suppressions/unsubscribe";

export const dynamic = "force-dynamic";

const html = (body: string, status = 200) =>
  new Response(body, { status, headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" } });

const wantsHtml = (req: Request) => /text\/html/.test(req.headers.get("accept") ?? "");

// POST /api/unsubscribe/:token – RFC 8058 one-click unsubscribe: any body, no cookie, no auth; 200 every time
export const POST = route({ auth: false }, async ({ req, params }) => {
  await readTextLimited(req, 64 * 1024).catch(() => ""); // the body (List-Unsubscribe=One-Click) says nothing more
  try {
    const { email } = await unsubscribe(params.token);
    return wantsHtml(req) ? html(unsubscribePage("done", email)) : ok({ unsubscribed: true, email });
  } catch (error) {
    if (error instanceof AppError && error.code === "bad_request" && wantsHtml(req)) return html(unsubscribePage("invalid"), 400);
    throw error;
  }
});

// GET /api/unsubscribe/:token – the confirmation page with one "Unsubscribe" button (never unsubscribes by itself);
// a bad token answers a page to a browser and problem+json to anything else
export const GET = route({ auth: false }, async ({ req, params }) => {
  try {
    return html(unsubscribePage("confirm", checkUnsubscribeToken(params.token).email));
  } catch (error) {
    if (error instanceof AppError && error.code === "bad_request" && wantsHtml(req)) return html(unsubscribePage("invalid"), 400);
    throw error;
  }
});
