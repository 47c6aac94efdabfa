import { created, route } from "@/lib/http/route";
import { registerBody } from "@/lib/schemas/accounts";
import { registerAccount } from "@/lib/services/accounts/register-account";

// POST /api/auth/register – create an account and email its 6-digit code
export const POST = route({ auth: false, body: registerBody }, async ({ body, req }) => created(await registerAccount(body, { req })));
