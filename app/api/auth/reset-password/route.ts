import { ok, route } from "@/lib/http/route";
import { resetPasswordBody } from "@/lib/schemas/accounts";
import { resetPassword } from "@/lib/services/accounts/reset-password";

// POST /api/auth/reset-password – the emailed reset code and a new password for a fresh token pair
export const POST = route({ auth: false, body: resetPasswordBody }, async ({ body }) => ok(await resetPassword(body)));
