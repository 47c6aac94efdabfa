import { json, route } from "@/lib/http/route";
import { checkReadiness } from "@/lib/services/operations/check-readiness";

export const dynamic = "force-dynamic";

// GET /api/health/ready – readiness: database reachable, migrations current, and whether this process executes runs
export const GET = route({ auth: false }, async () => {
  const { ready, state } = await checkReadiness();
  return json(state, ready ? 200 : 503);
});
