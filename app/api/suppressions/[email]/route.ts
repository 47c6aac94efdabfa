import { noContent, route } from "@/lib/http/route";
import { removeSuppression } from "@/lib/services/suppressions/remove-suppression";

export const dynamic = "force-dynamic";

// DELETE /api/suppressions/:email – take an address off the list
export const DELETE = route({ auth: true }, async ({ account, params }) => {
  await removeSuppression(account.id, params.email);
  return noContent();
});
