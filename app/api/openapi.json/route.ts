import { getConfig } from "@/lib/config";
import { buildOpenApiDocument } from "@/lib/http/openapi";
import { allOperations } from "@/lib/http/operations";
import { ok, route } from "@/lib/http/route";
import pkg from "@/package.json";

export const dynamic = "force-dynamic";

// GET /api/openapi.json – the OpenAPI 3.1 document, built from the same zod schemas that validate requests
export const GET = route({ auth: false }, async () =>
  ok(buildOpenApiDocument(allOperations, { version: pkg.version, serverUrl: getConfig().appUrl })),
);
