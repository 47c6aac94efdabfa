import "server-only";
import type { Db } from "./client";
import { migrationsFolder } from "./client";

/** Applies the SQL migrations in db/migrations to a postgres.js database. */
export async function migratePostgres(db: Db): Promise<void> {
  const { migrate } = await import("drizzle-orm/postgres-js/migrator");
  await migrate(db, { migrationsFolder });
}
