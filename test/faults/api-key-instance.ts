// One app instance for the two-instance API key test: the handlers it needs over node:http (as `next start` serves
// them) on DATABASE_URL, on an ephemeral port it prints as `listening <url>`. Runs until killed.
import * as apiKeyRoute from "@/app/api/account/api-keys/[keyId]/route";
import * as apiKeysRoute from "@/app/api/account/api-keys/route";
import * as workflowsRoute from "@/app/api/workflows/route";
import * as enqueueRoute from "@/app/api/workflows/[workflowId]/run/route";
import { serveRoutes } from "@/test/support/route-server";

serveRoutes([
  { pattern: /^\/api\/account\/api-keys$/, module: apiKeysRoute },
  { pattern: /^\/api\/account\/api-keys\/(?<keyId>[^/]+)$/, module: apiKeyRoute },
  { pattern: /^\/api\/workflows$/, module: workflowsRoute },
  { pattern: /^\/api\/workflows\/(?<workflowId>[^/]+)\/run$/, module: enqueueRoute },
]).then(
  (server) => console.log(`listening ${server.url}`),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
