// npm run db:migrate — applies migrations to DATABASE_URL, or to the embedded PGlite database.
import { closeDb, getDbHandle } from "./client";
import { migratePostgres } from "./migrate";

async function main() {
  const handle = await getDbHandle(); // PGlite migrates as it opens
  if (handle.driver === "postgres") await migratePostgres(handle.db);
  await closeDb();
  console.log(`Migrations applied (${handle.driver}).`);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
