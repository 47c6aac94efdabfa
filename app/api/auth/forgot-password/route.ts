import { accepted, route } from "@/lib/http/route";
import { emailOnlyBody } from "@/lib/schemas/accounts";
import { forgotPassword } from "@/lib/services/accounts/reset-password";

// POST /api/auth/forgot-password – email a reset code to a verified account (same answer for any address)
export const POST = route({ auth: false, body: emailOnlyBody }, async ({ body }) => accepted(await forgotPassword(body.email)));
