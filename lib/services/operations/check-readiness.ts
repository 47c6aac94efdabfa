import "server-only";
import { readFileSync } from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { execRows, getDb, migrationsFolder, type Db } from "@/db/client";
import { getConfig } from "@/lib/config";
import { getEmbeddedExecutor } from "@/lib/engine";
import { log } from "@/lib/log";

export type Readiness = {
  database: "ok" | "unreachable";
  migrations: "current" | "behind" | "unknown";
  executor: "running" | "off";
};

/** A database that does not answer within this long counts as unreachable (a load balancer's probe must not hang). */
const DATABASE_TIMEOUT_MS = 5_000;

let latestMigration: number | undefined;

/** The creation time of the newest migration this build ships (drizzle's journal), read once. */
function latestShippedMigration(): number {
  if (latestMigration === undefined) {
    const journal = JSON.parse(readFileSync(path.join(migrationsFolder, "meta", "_journal.json"), "utf8")) as { entries: { when: number }[] };
    latestMigration = Math.max(...journal.entries.map((e) => e.when));
  }
  return latestMigration;
}

/**
 * Ready means: the database answers, every migration this build ships is applied (drizzle records each applied one
 * with its creation time), and — said, not required — whether this process executes runs. A process whose executor
 * is off (EXECUTOR=off, or Inngest executes the runs) is still ready to serve.
 */
export async function checkReadiness(): Promise<{ ready: boolean; state: Readiness }> {
  const config = getConfig();
  const executor = config.executorEnabled && !config.inngest.enabled && getEmbeddedExecutor() ? "running" : "off";
  let timer: NodeJS.Timeout | undefined;
  try {
    // Opening the database is not timed (the embedded one loads from disk); its statements are.
    const db = await getDb();
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${DATABASE_TIMEOUT_MS} ms`)), DATABASE_TIMEOUT_MS);
    });
    const applied = await Promise.race([appliedMigration(db), timeout]);
    const migrations = applied !== null && applied >= latestShippedMigration() ? "current" : "behind";
    return { ready: migrations === "current", state: { database: "ok", migrations, executor } };
  } catch (error) {
    log.warn("readiness: the database is not reachable", { error });
    return { ready: false, state: { database: "unreachable", migrations: "unknown", executor } };
  } finally {
    clearTimeout(timer);
  }
}

/** The newest applied migration's creation time, or null when none was ever applied. */
async function appliedMigration(db: Db): Promise<number | null> {
  const [exists] = await execRows<{ present: boolean }>(db, sql`select to_regclass('drizzle.__drizzle_migrations') is not null as present`);
  if (!exists?.present) return null;
  const [row] = await execRows<{ latest: string | number | null }>(db, sql`select max(created_at) as latest from drizzle.__drizzle_migrations`);
  return row?.latest === null || row?.latest === undefined ? null : Number(row.latest);
}
