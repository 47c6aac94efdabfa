import { afterAll, beforeAll } from "vitest";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { endProcessWideWork, startFileFresh } from "./fresh-file";

// A worker runs many files one after another: this file starts with fresh modules of ours, the worker's environment
// and nothing left on globalThis by the previous file (test/support/fresh-file.ts).
await startFileFresh();

// Tests never touch the developer's .data directory, and never send real email.
process.env.DATA_DIR = mkdtempSync(path.join(os.tmpdir(), "flowmail-test-"));
process.env.AUTH_SECRET ??= "test-secret-test-secret-test-secret-0123456789";
delete process.env.DATABASE_URL;
delete process.env.RESEND_API_KEY;
delete process.env.INNGEST_EVENT_KEY;
delete process.env.INNGEST_SIGNING_KEY;
delete process.env.INNGEST_DEV;
delete process.env.GOOGLE_CLIENT_ID;
delete process.env.GOOGLE_CLIENT_SECRET;
delete process.env.TEST_DATABASE_CURRENT_URL;
// Sends are paced as in production, at a rate that does not make tests wait: 2,500 emails at the default 5 provider
// calls a second spent 5 s of real time in the pacing slots. A test about pacing sets its own rate.
process.env.EMAIL_RATE_PER_SECOND ??= "200";
// Loaded after the reset above: this file's own instance of the config module.
(await import("@/lib/config")).resetConfig();

/**
 * Each test file gets its own fresh database the first time it asks for one (getDb/getDbHandle in db/client.ts call
 * the opener installed here); a file that never does gets none, and does not even load the database code.
 * test/support/db.ts makes the database from one migrated copy (PGlite snapshot, or a PostgreSQL template).
 */
const slot = globalThis as { __flowmailDb?: unknown; __flowmailDbOpener?: () => Promise<unknown> };
let testDatabase: Promise<typeof import("./db")> | undefined;
slot.__flowmailDbOpener = async () => (await (testDatabase ??= import("./db"))).openTestDatabase();

// A file that reaches PostgreSQL by its address (TEST_DATABASE_CURRENT_URL exists only once the database does) gets
// its database before its own hooks run.
beforeAll(async ({}, suite) => {
  const filepath = "filepath" in suite ? suite.filepath : undefined;
  if (process.env.TEST_DATABASE_URL && filepath && readFileSync(filepath, "utf8").includes("TEST_DATABASE_CURRENT_URL")) {
    const { getDbHandle } = await import("@/db/client");
    await getDbHandle();
  }
});

// Runs after the file's own after-hooks (they run in reverse order of registration): what the file left running
// stops before its database closes.
afterAll(async () => {
  await endProcessWideWork();
  if (slot.__flowmailDb) await (await import("@/db/client")).closeDb();
  if (testDatabase) await (await testDatabase).dropTestDatabases();
});
