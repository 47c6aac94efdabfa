import "server-only";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import path from "node:path";
import type { SQL } from "drizzle-orm";
import type { PostgresJsDatabase } from "drizzle-orm/postgres-js";
import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import { withFastSql } from "./fast-sql";
import * as schema from "./schema";

/**
 * One drizzle type for both drivers. PGlite's and postgres.js's drizzle classes share the query builder;
 * only `execute` differs in its return shape, which `rows()` smooths over.
 */
export type Db = PostgresJsDatabase<typeof schema>;
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

export type DbHandle = {
  db: Db;
  driver: "pglite" | "postgres";
  close: () => Promise<void>;
  /**
   * PostgreSQL only: a small pool whose commits do not wait for the WAL flush (`synchronous_commit = off`), for the run
   * engine's own state (node statuses and outputs, run logs, claims, finalize: lib/engine/pg-run-store.ts). Visibility
   * is the same; only a crash of the PostgreSQL server itself can lose the last fraction of a second of those writes,
   * and any later ordinary commit (the send ledger, an enqueue) flushes them first. What such a loss costs: the nodes
   * written then run again when the run resumes; the send ledger, which stays on `db`, keeps every email exactly-once.
   */
  runStateDb?: () => Promise<Db>;
  /**
   * PGlite in its worker only: the same database on the worker's background lane, whose statements wait while any
   * request's statement is queued (db/pglite-worker.mjs). The run engine works through it, so a big run's statements
   * never queue in front of a request's.
   */
  backgroundDb?: Db;
};

/**
 * `__flowmailDbOpener`: tests put an opener there instead of a database (test/support/setup.ts, without importing
 * this module, so that files without a database never load drizzle). It runs the first time something asks for the
 * database: a test file that never does gets none.
 */
const globalForDb = globalThis as unknown as { __flowmailDb?: Promise<DbHandle>; __flowmailDbOpener?: () => Promise<DbHandle> };

export const migrationsFolder = path.join(process.cwd(), "db", "migrations");

/** The process-wide database. Kept on globalThis so that dev-server reloads never open PGlite twice. */
export function getDb(): Promise<Db> {
  return getDbHandle().then((h) => h.db);
}

/**
 * The database for the run engine's own state: `runStateDb` on PostgreSQL, the background lane on PGlite in its worker
 * (see DbHandle), the database otherwise.
 */
export function getRunStateDb(): Promise<Db> {
  return getDbHandle().then((h) => (h.runStateDb ? h.runStateDb() : (h.backgroundDb ?? h.db)));
}

/** The database for background work (the run engine, the sweep): the background lane on PGlite in its worker, else `db`. */
export function getBackgroundDb(): Promise<Db> {
  return getDbHandle().then((h) => h.backgroundDb ?? h.db);
}

export function getDbHandle(): Promise<DbHandle> {
  if (!globalForDb.__flowmailDb) {
    globalForDb.__flowmailDb = openDatabase().catch((error) => {
      globalForDb.__flowmailDb = undefined;
      throw error;
    });
  }
  return globalForDb.__flowmailDb;
}

/** Tests (and tools) install their own database. */
export function setDbHandle(handle: DbHandle | undefined): void {
  globalForDb.__flowmailDb = handle ? Promise.resolve(handle) : undefined;
}

export async function closeDb(): Promise<void> {
  const current = globalForDb.__flowmailDb;
  globalForDb.__flowmailDb = undefined;
  if (current) await (await current).close();
}

async function openDatabase(): Promise<DbHandle> {
  if (globalForDb.__flowmailDbOpener) return globalForDb.__flowmailDbOpener();
  const config = getConfig();
  if (config.databaseUrl) {
    return openPostgres(config.databaseUrl, { preparedStatements: config.databasePreparedStatements, asyncRunState: config.databaseAsyncRunState });
  }
  return openEmbedded(path.join(config.dataDir, "pglite"));
}

export async function openPostgres(
  url: string,
  options: { max?: number; preparedStatements?: boolean; asyncRunState?: boolean; runStateConnection?: Record<string, string> } = {},
): Promise<DbHandle> {
  const { default: postgres } = await import("postgres");
  assertDriverPatched(postgres);
  const { drizzle } = await import("drizzle-orm/postgres-js");
  const client = postgres(url, { max: options.max ?? 10, onnotice: () => {}, idle_timeout: 30 });
  const wrap = (c: typeof client) => withFastSql(drizzle(options.preparedStatements === false ? c : withPreparedStatements(c), { schema }));
  const db = wrap(client);
  if (options.asyncRunState === false) return { db, driver: "postgres", close: () => client.end({ timeout: 5 }) };
  // Connections open lazily: a process that executes no run never opens one.
  const runState = postgres(url, { max: 4, onnotice: () => {}, idle_timeout: 30, connection: options.runStateConnection ?? { synchronous_commit: "off" } });
  let checked: Promise<Db> | undefined;
  // A pooler (PgBouncer, Supavisor) may refuse the startup parameter: then the run state uses the ordinary pool.
  const probe = async (): Promise<Db> => {
    try {
      await runState`select 1`;
      return wrap(runState);
    } catch (error) {
      if (!/startup parameter|synchronous_commit/i.test(error instanceof Error ? error.message : String(error))) {
        checked = undefined; // an outage: ask again next time
        throw error;
      }
      log.warn("the database refused synchronous_commit=off as a startup parameter (a pooler?): run state is written with durable commits", { error });
      void runState.end({ timeout: 1 });
      return db;
    }
  };
  return {
    db,
    runStateDb: () => (checked ??= probe()),
    driver: "postgres",
    close: async () => {
      await Promise.all([client.end({ timeout: 5 }), runState.end({ timeout: 5 })]);
    },
  };
}

/**
 * postgres.js 3.4.9 is patched at install (patches/postgres+3.4.9.patch, applied by patch-package in postinstall;
 * upstream porsager/postgres#1208): unpatched, a transaction cut by a restart throws an uncaught TypeError and leaves
 * its pooled connection hanging forever. An install with --ignore-scripts skips the patch silently, so the driver that
 * was actually loaded must carry the patch's mark, or we refuse to start.
 */
export function assertDriverPatched(driver: unknown): void {
  if ((driver as { flowmailPatch?: unknown }).flowmailPatch === "null-socket-guard") return;
  throw new Error(
    "The PostgreSQL driver (postgres.js) is not patched: patches/postgres+3.4.9.patch was not applied, probably because " +
      "dependencies were installed with --ignore-scripts. Run `npx patch-package` in the project directory (or " +
      "reinstall without --ignore-scripts), then start again.",
  );
}

/** Statements with more parameters than this (bulk inserts, long IN lists) vary in shape: not worth a cached plan. */
const MAX_PREPARED_PARAMETERS = 32;

type Unsafe = (query: string, params?: unknown[], options?: { prepare?: boolean }) => unknown;

/**
 * drizzle runs every statement through `sql.unsafe(query, params, { prepare: false })`, and postgres.js then sends an
 * unnamed statement with parameters in two round trips (Parse + Describe, wait for the parameter types, then Bind +
 * Execute): twice the socket writes and waits of a prepared statement, which postgres.js describes once per connection
 * and afterwards sends in one. This wrapper asks for prepared statements (small ones: see MAX_PREPARED_PARAMETERS),
 * in transactions too. DATABASE_PREPARED_STATEMENTS=false turns it off for a pooler in transaction mode that does not
 * support prepared statements.
 */
function withPreparedStatements<T extends object>(sql: T): T {
  return new Proxy(sql, {
    get(target, prop) {
      const value = Reflect.get(target, prop) as unknown;
      if (prop === "unsafe" && typeof value === "function") {
        return ((query, params, options) =>
          (value as Unsafe).call(target, query, params, { ...options, prepare: (params?.length ?? 0) <= MAX_PREPARED_PARAMETERS })) as Unsafe;
      }
      if (prop === "begin" && typeof value === "function") {
        // begin(fn) or begin(options, fn): the transaction's own `sql` gets the same treatment.
        return (...args: unknown[]) => {
          const fn = args[args.length - 1] as (tx: object) => unknown;
          return (value as (...a: unknown[]) => unknown).call(target, ...args.slice(0, -1), (tx: object) => fn(withPreparedStatements(tx)));
        };
      }
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * PGlite in a directory (or in memory when `dir` is undefined), migrated to the latest schema. `snapshot` (tests: a
 * dumpDataDir of an already migrated database, test/support/db.ts) starts from that data directory instead of
 * running initdb and the migrations.
 */
export async function openPglite(dir: string | undefined, options: { snapshot?: Blob } = {}): Promise<DbHandle> {
  const { PGlite } = await import("@electric-sql/pglite");
  const { drizzle } = await import("drizzle-orm/pglite");
  // The options-object form: `new PGlite(undefined, options)` drops the options.
  const client = new PGlite({ dataDir: dir, ...(options.snapshot ? { loadDataDir: options.snapshot } : {}) });
  await client.waitReady;
  yieldBeforeEachStatement(client);
  const pgliteDb = withFastSql(drizzle(client, { schema }));
  if (!options.snapshot) {
    const { migrate } = await import("drizzle-orm/pglite/migrator");
    await migrate(pgliteDb, { migrationsFolder });
  }
  const db = pgliteDb as unknown as Db;
  return { db, driver: "pglite", close: () => client.close() };
}

/**
 * PGlite executes each statement synchronously in WASM and settles its promise in a microtask, so a chain of awaited
 * statements (a run's node: read, write, write…) never hands the event loop back: HTTP requests, timers and sockets
 * waited for the whole chain — 2 s at the start of a 100,000-row run (bench/freeze.ts). One macrotask turn
 * (setImmediate) before each statement lets them in; it costs microseconds when nothing waits. Statements inside a
 * transaction (its own `tx.query`) do not yield: everything else waits on PGlite's lock during one anyway.
 */
function yieldBeforeEachStatement(client: { query: (...args: never[]) => Promise<unknown>; exec: (...args: never[]) => Promise<unknown> }): void {
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  for (const method of ["query", "exec"] as const) {
    const original = client[method].bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as Record<string, unknown>)[method] = async (...args: unknown[]) => {
      await turn();
      return original(...args);
    };
  }
}

/**
 * The server's embedded database: PGlite in a worker thread (db/pglite-in-worker.ts), so that its statements never
 * block the event loop; PGLITE_IN_WORKER=false keeps it on the main thread (as tests and tools open it).
 */
export async function openPgliteWorker(dir: string | undefined): Promise<DbHandle> {
  const { openPgliteInWorker } = await import("./pglite-in-worker");
  const { drizzle } = await import("drizzle-orm/pglite");
  const client = openPgliteInWorker(dir);
  try {
    await client.waitReady;
    const pgliteDb = withFastSql(drizzle(client as never, { schema }));
    const { migrate } = await import("drizzle-orm/pglite/migrator");
    await migrate(pgliteDb, { migrationsFolder });
    const backgroundDb = withFastSql(drizzle(client.background as never, { schema })) as unknown as Db;
    return { db: pgliteDb as unknown as Db, backgroundDb, driver: "pglite", close: () => client.close() };
  } catch (error) {
    await client.close().catch(() => {});
    throw error;
  }
}

/**
 * A new data directory's initdb grows PGlite's WASM memory to ~880 MB, which WASM never gives back; the thread that
 * ran it is ended and the database opened again in a fresh one (~490 MB RSS; ~0.5 s, on the first start only).
 */
async function openPgliteWorkerFresh(dir: string): Promise<DbHandle> {
  const fresh = !existsSync(path.join(dir, "PG_VERSION"));
  const handle = await openPgliteWorker(dir);
  if (!fresh) return handle;
  await handle.close();
  return openPgliteWorker(dir);
}

async function openEmbedded(dir: string): Promise<DbHandle> {
  mkdirSync(dir, { recursive: true });
  const releaseLock = acquireDirectoryLock(dir);
  try {
    const handle = process.env.PGLITE_IN_WORKER === "false" ? await openPglite(dir) : await openPgliteWorkerFresh(dir);
    return {
      ...handle,
      close: async () => {
        await handle.close();
        releaseLock();
      },
    };
  } catch (error) {
    releaseLock();
    throw error;
  }
}

export class DatabaseLockedError extends Error {
  constructor(dir: string, pid: number) {
    super(
      `The embedded database at ${dir} is already in use by another Flowmail process (pid ${pid}). ` +
        `PGlite serves one process only: stop that process, use another DATA_DIR, or set DATABASE_URL to a PostgreSQL server.`,
    );
    this.name = "DatabaseLockedError";
  }
}

/**
 * PGlite has no cross-process locking: two processes on one directory silently lose rows. A lock file holding
 * our pid refuses a second process; a lock left by a dead process is taken over.
 */
export function acquireDirectoryLock(dir: string): () => void {
  const lockFile = path.join(dir, "..", `${path.basename(dir)}.lock`);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockFile, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      const release = () => {
        try {
          if (existsSync(lockFile) && readFileSync(lockFile, "utf8").trim() === String(process.pid)) rmSync(lockFile);
        } catch {
          // best effort
        }
      };
      process.once("exit", release);
      return release;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const pid = Number(readFileSync(lockFile, "utf8").trim());
      if (pid === process.pid) return () => {};
      if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) throw new DatabaseLockedError(dir, pid);
      rmSync(lockFile, { force: true }); // stale: its process is gone
    }
  }
  throw new Error(`Could not take the lock on ${dir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** `db.execute` returns an array on postgres.js and `{ rows }` on PGlite. */
export async function execRows<T = Record<string, unknown>>(db: Db | Tx, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown;
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}

export { schema };
