// npm run db:migrate — applies migrations to DATABASE_URL, or to the embedded PGlite database.
import { log } from "@/lib/log";
import { closeDb, getDbHandle } from "./client";
import { migratePostgres } from "./migrate";

async function main() {
  const handle = await getDbHandle(); // PGlite migrates as it opens
  if (handle.driver === "postgres") await migratePostgres(handle.db);
  await closeDb();
  log.info("migrations applied", { driver: handle.driver });
}

main().catch((error) => {
  log.error("migrations failed", { error });
  process.exit(1);
});
