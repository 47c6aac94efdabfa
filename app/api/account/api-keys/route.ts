import { created, ok, route } from "@/lib/http/route";
import { createApiKeyBody } from "@/lib/schemas/api-keys";
import { createApiKey } from "@/lib/services/api-keys/create-api-key";
import { listApiKeys } from "@/lib/services/api-keys/list-api-keys";

export const dynamic = "force-dynamic";

// POST /api/account/api-keys – create an API key; the key itself is shown only in this answer
export const POST = route({ auth: true, body: createApiKeyBody }, async ({ account, body }) =>
  created(await createApiKey(account.id, body)));

// GET /api/account/api-keys – the account's keys (not revoked), newest first, without their secrets
export const GET = route({ auth: true }, async ({ account }) => ok(await listApiKeys(account.id)));
