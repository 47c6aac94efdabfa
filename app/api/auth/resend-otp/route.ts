import { accepted, route } from "@/lib/http/route";
import { emailOnlyBody } from "@/lib/schemas/accounts";
import { resendOtp } from "@/lib/services/accounts/resend-otp";

// POST /api/auth/resend-otp – email a new code (same answer for any address)
export const POST = route({ auth: false, body: emailOnlyBody }, async ({ body }) => accepted(await resendOtp(body.email)));
