import { noContent, route } from "@/lib/http/route";
import { revokeApiKey } from "@/lib/services/api-keys/revoke-api-key";

export const dynamic = "force-dynamic";

// DELETE /api/account/api-keys/:keyId – revoke a key: it fails from the very next request
export const DELETE = route({ auth: true }, async ({ account, params }) => {
  await revokeApiKey(account.id, params.keyId);
  return noContent();
});
