import { sql } from "drizzle-orm";
import { getDb } from "@/db/client";
import { problem } from "@/lib/http/problem";
import { ok, route } from "@/lib/http/route";
import { log } from "@/lib/log";

export const dynamic = "force-dynamic";

// GET /api/health – liveness and database check
export const GET = route({ auth: false }, async () => {
  try {
    const db = await getDb();
    await db.execute(sql`select 1`);
  } catch (error) {
    log.error("health check failed", { error });
    return problem("service_unavailable", "The database is not reachable.");
  }
  return ok({ status: "ok", db: "ok" });
});
