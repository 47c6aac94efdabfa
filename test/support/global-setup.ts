// Once per `vitest run`, before any test file: makes sure the migrated copy that every file's database starts from
// exists (a PGlite snapshot, or the PostgreSQL template with TEST_DATABASE_URL). Cheap when it does: it is kept
// between runs and keyed by the migrations. Built here, outside any test's time limit, and once instead of once per
// worker that happens to need it first.
import { prepareTestDatabaseCopy } from "./db";

export default async function setup(): Promise<void> {
  await prepareTestDatabaseCopy();
}
