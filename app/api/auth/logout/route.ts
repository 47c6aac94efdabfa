import { now } from "@/lib/clock";
import { noContent, route } from "@/lib/http/route";
import { refreshTokenBody } from "@/lib/schemas/accounts";
import { revokeRefreshTokenFamily } from "@/lib/services/accounts/sessions";

// POST /api/auth/logout – revoke the refresh token's family
export const POST = route({ auth: false, body: refreshTokenBody }, async ({ body }) => {
  await revokeRefreshTokenFamily(body.refreshToken, now());
  return noContent();
});
