import { serve } from "inngest/next";
import { getInngest } from "@/lib/events/inngest";
import { functions } from "@/inngest/functions";
import { getConfig } from "@/lib/config";
import { errorResponse, problem } from "@/lib/http/problem";

export const dynamic = "force-dynamic";

const served = serve({ client: getInngest(), functions });
type ServeHandler = typeof served.GET;

/**
 * Without Inngest configured the SDK answers 500 to every request (it wants a signing key), and with it configured
 * a malformed JSON body makes the SDK throw (a bare 500 from Next). Both become the contract's problem+json.
 * The config is read per request, never at import: `next build` evaluates this module without production secrets.
 */
function guarded(handler: ServeHandler): ServeHandler {
  return (async (req: Request, ctx: unknown) => {
    if (!getConfig().inngest.enabled) {
      return problem("not_found", "The Inngest endpoint is served only when Inngest is configured (INNGEST_EVENT_KEY, INNGEST_SIGNING_KEY).");
    }
    // In dev mode (INNGEST_DEV, no signature check) the SDK answers an unknown function id with a 500 and its stack.
    const fnId = new URL(req.url).searchParams.get("fnId");
    if (getConfig().inngest.dev && req.method === "POST" && fnId !== null && !knownFunctionIds().has(fnId)) {
      return problem("not_found", `No Inngest function "${fnId.slice(0, 100)}" is served here.`);
    }
    try {
      return await (handler as (req: Request, ctx: unknown) => Promise<Response>)(req, ctx);
    } catch (error) {
      if (error instanceof SyntaxError) return problem("malformed_json", "The request body is not valid JSON.");
      return errorResponse(error, { method: req.method, path: new URL(req.url).pathname });
    }
  }) as ServeHandler;
}

let functionIds: Set<string> | undefined;

/** The ids Inngest calls the functions by: `<app id>-<function id>`. */
function knownFunctionIds(): Set<string> {
  const appId = getInngest().id;
  functionIds ??= new Set(functions.map((f) => (f as unknown as { id: (prefix?: string) => string }).id(appId)));
  return functionIds;
}

// GET/POST/PUT /api/inngest – the Inngest serve endpoint (introspection, step execution, registration)
export const GET = guarded(served.GET);
export const POST = guarded(served.POST);
export const PUT = guarded(served.PUT);
