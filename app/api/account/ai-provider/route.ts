import { noContent, ok, route } from "@/lib/http/route";
import { aiProviderBody } from "@/lib/schemas/accounts";
import { deleteAiProvider, setAiProvider } from "@/lib/services/accounts/account-settings";

// PUT /api/account/ai-provider – store the AI provider settings (key encrypted)
export const PUT = route({ auth: true, body: aiProviderBody }, async ({ account, body }) =>
  ok(await setAiProvider(account.id, body)));

// DELETE /api/account/ai-provider – forget the AI provider settings
export const DELETE = route({ auth: true }, async ({ account }) => {
  await deleteAiProvider(account.id);
  return noContent();
});
