import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { openPglite, openPostgres, setDbHandle, closeDb } from "@/db/client";
import { migratePostgres } from "@/db/migrate";

/**
 * Installs a fresh database for the current test file: PGlite in memory by default, or a new database on the
 * PostgreSQL server of TEST_DATABASE_URL (dropped afterwards). Returns the cleanup.
 */
export async function useTestDatabase(): Promise<() => Promise<void>> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) {
    setDbHandle(await openPglite(undefined));
    return closeDb;
  }
  const name = `flowmail_test_${randomBytes(6).toString("hex")}`;
  const admin = await openPostgres(serverUrl, { max: 1 });
  await admin.db.execute(sql.raw(`create database ${name}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const handle = await openPostgres(url.toString(), { max: 20 });
  await migratePostgres(handle.db);
  setDbHandle(handle);
  process.env.TEST_DATABASE_CURRENT_URL = url.toString();
  return async () => {
    await closeDb();
    await admin.db.execute(sql.raw(`drop database if exists ${name} with (force)`));
    await admin.close();
  };
}
