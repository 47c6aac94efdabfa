import { noContent, route } from "@/lib/http/route";
import { changePasswordBody } from "@/lib/schemas/accounts";
import { changePassword } from "@/lib/services/accounts/change-password";

// POST /api/account/password – change the password and revoke every session
export const POST = route({ auth: true, body: changePasswordBody }, async ({ account, body }) => {
  await changePassword(account, body);
  return noContent();
});
