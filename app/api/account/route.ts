import { ok, route } from "@/lib/http/route";
import { updateAccountBody } from "@/lib/schemas/accounts";
import { getAccount, updateAccount } from "@/lib/services/accounts/account-settings";

// GET /api/account – the signed-in account
export const GET = route({ auth: true }, async ({ account }) => ok(await getAccount(account.id)));

// PATCH /api/account – change the account's name
export const PATCH = route({ auth: true, body: updateAccountBody }, async ({ account, body }) =>
  ok(await updateAccount(account.id, body)));
