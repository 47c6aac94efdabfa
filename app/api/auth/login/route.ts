import { ok, route } from "@/lib/http/route";
import { loginBody } from "@/lib/schemas/accounts";
import { login } from "@/lib/services/accounts/login";

// POST /api/auth/login – email and password for a token pair
export const POST = route({ auth: false, body: loginBody }, async ({ body, req }) => ok(await login(body, { req })));
