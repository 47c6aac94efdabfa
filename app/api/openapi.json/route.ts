import { getConfig } from "@/lib/config";
import { buildOpenApiDocument } from "@/lib/http/openapi";
import { allOperations } from "@/lib/http/operations";
import { ok, route } from "@/lib/http/route";
import pkg from "@/package.json";

export const dynamic = "force-dynamic";

// GET /api/openapi.json – the OpenAPI 3.1 document, built from the same zod schemas that validate requests.
// Its server is APP_URL (or the Vercel deployment); without either, the address this request reached (a local server
// on another port than 3000 advertises itself correctly).
export const GET = route({ auth: false }, async ({ url }) => {
  const config = getConfig();
  return ok(buildOpenApiDocument(allOperations, { version: pkg.version, serverUrl: config.appUrlConfigured ? config.appUrl : url.origin }));
});
