import "server-only";
import path from "node:path";
import v8 from "node:v8";
import { Worker } from "node:worker_threads";

/**
 * PGlite in a worker thread (db/pglite-worker.mjs) behind the part of PGlite's interface that drizzle-orm/pglite uses:
 * `query(sql, params, { rowMode, parsers })`, `exec(sql)` and `transaction(fn)`. Statements run off the main thread,
 * so a big one (an 11 MB node output: ~300 ms of WASM) no longer holds HTTP requests; only its rows cross back
 * (structured clone). Transactions keep PGlite's semantics: the worker holds PGlite's lock from BEGIN to the end, so
 * statements from outside the transaction wait for it there, as they do in one thread.
 */
export type WorkerPglite = {
  query(sql: string, params?: unknown[], options?: { rowMode?: "array" | "object"; parsers?: unknown }): Promise<QueryResult>;
  exec(sql: string): Promise<QueryResult[]>;
  transaction<T>(fn: (tx: WorkerTransaction) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  waitReady: Promise<void>;
};
type WorkerTransaction = Pick<WorkerPglite, "query" | "exec"> & { rollback(): Promise<void>; closed: boolean };
/** 0: the app's requests; 1: background work (the run engine), taken only when no request's statement waits. */
type Lane = 0 | 1;
type QueryResult = { rows: unknown[]; fields: { name: string; dataTypeID: number }[]; affectedRows?: number };
type Reply = { id: string; ok: boolean; result?: unknown; error?: Record<string, unknown> & { message: string; name: string } };

/** A worker's error back as an Error with the same own fields (`code` is the SQLSTATE the app reads). */
function toError(plain: NonNullable<Reply["error"]>): Error {
  const error = new Error(plain.message);
  Object.assign(error, plain);
  return error;
}

/** The database thread's semi-spaces, in MB (V8's young generation is two of them). */
const WORKER_SEMI_SPACE_MB = { min: 1, max: 8 };

/**
 * Starts a thread whose V8 heap has a small young generation. The semi-space flags are the process's (`npm start`
 * gives `--max-semi-space-size=32` for the main thread's requests; Worker's resourceLimits do not override them), and
 * a thread's heap reads them once, when the thread starts: they are the small ones until the thread is online, then
 * the process's again. With the process's (then 64 MB), the database thread's young generation filled to 128 MB of
 * resident memory during an AI node (the garbage of each statement's messages), for no gain: its statements run one at
 * a time.
 */
export function startWithSmallYoungGeneration(start: () => Worker): Worker {
  // "0" is V8's "not set" (its own default applies).
  const flag = (name: string) => process.execArgv.find((a) => new RegExp(`^--${name.replaceAll("-", "[-_]")}=`).test(a))?.split("=")[1] ?? "0";
  const restore = () => {
    v8.setFlagsFromString(`--min-semi-space-size=${flag("min-semi-space-size")}`);
    v8.setFlagsFromString(`--max-semi-space-size=${flag("max-semi-space-size")}`);
  };
  v8.setFlagsFromString(`--min-semi-space-size=${WORKER_SEMI_SPACE_MB.min}`);
  v8.setFlagsFromString(`--max-semi-space-size=${WORKER_SEMI_SPACE_MB.max}`);
  let worker: Worker;
  try {
    worker = start();
  } catch (error) {
    restore();
    throw error;
  }
  worker.once("online", restore);
  worker.once("exit", restore);
  return worker;
}

/**
 * The worker's client (statements on the requests' lane) and `background`: the same database, same transactions and
 * visibility, whose statements the worker takes only when no request's statement is waiting (db/pglite-worker.mjs).
 */
export function openPgliteInWorker(dataDir: string | undefined): WorkerPglite & { background: WorkerPglite } {
  const worker = startWithSmallYoungGeneration(() => new Worker(path.join(process.cwd(), "db", "pglite-worker.mjs"), { workerData: { dataDir } }));
  const pending = new Map<string, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let next = 0;
  let failure: Error | undefined;
  // Like a socket, the thread keeps the process alive only while a statement is in flight: a script that has
  // finished with the database exits without closing it, as it would on the main thread.
  const expect = (id: string) =>
    new Promise<unknown>((resolve, reject) => {
      if (failure) return reject(failure);
      if (pending.size === 0) worker.ref();
      pending.set(id, { resolve, reject });
    });
  worker.on("message", (reply: Reply) => {
    const waiter = pending.get(reply.id);
    if (!waiter) return;
    pending.delete(reply.id);
    if (pending.size === 0) worker.unref();
    if (reply.ok) waiter.resolve(reply.result);
    else waiter.reject(toError(reply.error!));
  });
  const failAll = (error: Error) => {
    failure = error;
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  };
  worker.on("error", failAll);
  worker.on("exit", (code) => failAll(new Error(`The embedded database's thread exited (code ${code})`)));
  const call = (op: string, fields: Record<string, unknown> = {}) => {
    const id = String(++next);
    const answer = expect(id);
    worker.postMessage({ id, op, ...fields });
    return answer;
  };
  const statements = (tx: string | undefined, lane: Lane) => ({
    query: (sql: string, params?: unknown[], options?: { rowMode?: "array" | "object"; parsers?: unknown }) =>
      call("query", { sql, params, rowMode: options?.rowMode, parsers: options?.parsers !== undefined, tx, lane }) as Promise<QueryResult>,
    exec: (sql: string) => call("exec", { sql, tx, lane }) as Promise<QueryResult[]>,
  });
  const waitReady = expect("ready").then(() => undefined);
  const close = async () => {
    await call("close");
    await worker.terminate();
  };
  const client = (lane: Lane): WorkerPglite => ({
    ...statements(undefined, lane),
    async transaction<T>(fn: (tx: WorkerTransaction) => Promise<T>): Promise<T> {
      const id = `tx${++next}`;
      const ended = expect(`end:${id}`);
      ended.catch(() => {}); // read below; a rollback's rejection is expected
      await call("begin", { tx: id, lane });
      const tx: WorkerTransaction = {
        ...statements(id, lane),
        closed: false,
        async rollback() {
          throw new Error("rollback is done by throwing from the transaction's function");
        },
      };
      let value: T;
      try {
        value = await fn(tx);
      } catch (error) {
        await call("rollback", { tx: id, lane });
        await ended.catch(() => {});
        tx.closed = true;
        throw error;
      }
      await call("commit", { tx: id, lane });
      await ended; // COMMIT's own failure (a deferred constraint) rejects here
      tx.closed = true;
      return value;
    },
    close,
    waitReady,
  });
  return { ...client(0), background: client(1) };
}
