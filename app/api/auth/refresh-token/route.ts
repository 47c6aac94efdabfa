import { now } from "@/lib/clock";
import { ok, route } from "@/lib/http/route";
import { refreshTokenBody } from "@/lib/schemas/accounts";
import { rotateRefreshToken } from "@/lib/services/accounts/sessions";

// POST /api/auth/refresh-token – rotate a refresh token into a new pair
export const POST = route({ auth: false, body: refreshTokenBody }, async ({ body }) =>
  ok(await rotateRefreshToken(body.refreshToken, now())));
