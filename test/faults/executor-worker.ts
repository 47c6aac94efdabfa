// What the kill -9 fault tests (kill-mid-output, kill-mid-shared-send) share: the database their executor processes
// open, and those processes themselves (test/faults/worker.ts, sending through `providerUrl`).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { getDbHandle, openPglite, setDbHandle, type Db } from "@/db/client";

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

/**
 * Runs `setup` against the database the workers will open, and answers their environment and a way for the test to
 * read that database afterwards. On PostgreSQL (TEST_DATABASE_URL) that is the test's own database. PGlite cannot be
 * shared between processes: there `setup` writes to a PGlite data directory that is closed afterwards, and the
 * workers open it one after the other (the second takes over the dead one's lock file).
 */
export async function inWorkerDatabase<T>(
  dirPrefix: string,
  setup: () => Promise<T>,
): Promise<{ value: T; workerEnv: Record<string, string>; openForCheck: () => Promise<{ db: Db; close: () => Promise<void> }> }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), dirPrefix));
  const original = await getDbHandle();
  const fileDb = onPostgres ? undefined : await openPglite(path.join(dataDir, "pglite"));
  if (fileDb) setDbHandle(fileDb);
  let value: T;
  try {
    value = await setup();
  } finally {
    if (fileDb) {
      await fileDb.close();
      setDbHandle(original);
    }
  }
  return {
    value,
    workerEnv: onPostgres ? { DATABASE_URL: process.env.TEST_DATABASE_CURRENT_URL! } : { DATA_DIR: dataDir },
    openForCheck: async () => {
      if (onPostgres) return { db: original.db, close: async () => {} };
      const checkDb = await openPglite(path.join(dataDir, "pglite"));
      return { db: checkDb.db, close: () => checkDb.close() };
    },
  };
}

/** An executor process (test/faults/worker.ts) sending through `providerUrl`; `env` adds to or overrides its own. */
export function startExecutorWorker(providerUrl: string, env: Record<string, string>): { child: ChildProcess; exited: Promise<number | string> } {
  // node itself with tsx as a loader: the tsx CLI would run the worker in a grandchild that SIGKILL would not reach.
  const child = spawn(process.execPath, ["--conditions=react-server", "--import", "tsx", "test/faults/worker.ts"], {
    cwd: process.cwd(),
    env: { ...process.env, LOG_LEVEL: "error", RESEND_API_KEY: "re_test", RESEND_BASE_URL: providerUrl, EMAIL_DAILY_QUOTA: "1000000", ...env },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const exited = new Promise<number | string>((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
  return { child, exited };
}

export function withTimeout<T>(what: string, promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms).unref())]);
}
