import { ok, route } from "@/lib/http/route";
import { verifyEmailBody } from "@/lib/schemas/accounts";
import { verifyEmail } from "@/lib/services/accounts/verify-email";

// POST /api/auth/verify-email – check the emailed code and sign in
export const POST = route({ auth: false, body: verifyEmailBody }, async ({ body }) => ok(await verifyEmail(body)));
