// The embedded database in its own thread (db/client.ts, openPgliteInWorker). PGlite executes every statement
// synchronously in WASM: on the server's main thread one 11 MB node output held every HTTP request for ~300 ms
// (bench/freeze.ts). Here it runs beside the event loop; the main thread sends statements and receives their rows.
// Plain JavaScript, loaded by path at run time (no bundler in between).
import { parentPort, workerData } from "node:worker_threads";
import { PGlite, types } from "@electric-sql/pglite";

const identity = (value) => value;
// The parsers drizzle-orm/pglite asks for (dates, intervals and numeric arrays stay text): functions cannot cross
// threads, so the worker applies the same ones when asked for `drizzleParsers`.
const drizzleParsers = {
  [types.TIMESTAMP]: identity,
  [types.TIMESTAMPTZ]: identity,
  [types.INTERVAL]: identity,
  [types.DATE]: identity,
  1231: identity,
  1115: identity,
  1185: identity,
  1187: identity,
  1182: identity,
};

/** An error as plain data: structured clone keeps only `message` of an Error, and the app reads `code` (SQLSTATE). */
function plainError(error) {
  const out = { message: String(error?.message ?? error), name: error?.name ?? "Error" };
  if (error && typeof error === "object") {
    for (const [key, value] of Object.entries(error)) {
      if (value === null || ["string", "number", "boolean"].includes(typeof value)) out[key] = value;
    }
  }
  return out;
}

// PostgreSQL's default 128 MB of shared buffers become resident WASM memory as they fill, and WASM memory is never
// given back: 16 MB took run-pipeline's RSS at enqueue from 593 to 447 MB and its peak from 908 to 799 MB, with the
// same run time (4.73 s / 4.75 s). PGLITE_SHARED_BUFFERS changes it.
const sharedBuffers = process.env.PGLITE_SHARED_BUFFERS || "16MB";
const pg = new PGlite({ dataDir: workerData.dataDir, startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${sharedBuffers}`] });
/** Open transactions by id: PGlite's transaction object, and the functions that end its callback. */
const transactions = new Map();

const handlers = {
  async query({ sql, params, rowMode, parsers, tx }) {
    const target = tx ? transactions.get(tx).tx : pg;
    const result = await target.query(sql, params, { rowMode, ...(parsers ? { parsers: drizzleParsers } : {}) });
    return { rows: result.rows, fields: result.fields, affectedRows: result.affectedRows };
  },
  async exec({ sql, tx }) {
    const target = tx ? transactions.get(tx).tx : pg;
    return (await target.exec(sql)).map((r) => ({ rows: r.rows, fields: r.fields, affectedRows: r.affectedRows }));
  },
  begin({ tx: id }) {
    // Answers once BEGIN has run (PGlite's lock held); the transaction's end is answered under the id `end:<id>`.
    return new Promise((began, failed) => {
      pg.transaction(
        (tx) =>
          new Promise((commit, rollback) => {
            transactions.set(id, { tx, commit, rollback });
            began(true);
          }),
      ).then(
        () => parentPort.postMessage({ id: `end:${id}`, ok: true }),
        (error) => parentPort.postMessage({ id: `end:${id}`, ok: false, error: plainError(error) }),
      ).finally(() => transactions.delete(id));
      pg.waitReady.catch(failed);
    });
  },
  commit({ tx }) {
    transactions.get(tx)?.commit();
    return true;
  },
  rollback({ tx }) {
    transactions.get(tx)?.rollback(new Error("rolled back"));
    return true;
  },
  async close() {
    await pg.close();
    return true;
  },
};

pg.waitReady.then(
  () => parentPort.postMessage({ id: "ready", ok: true }),
  (error) => parentPort.postMessage({ id: "ready", ok: false, error: plainError(error) }),
);

parentPort.on("message", async (message) => {
  try {
    const result = await handlers[message.op](message);
    parentPort.postMessage({ id: message.id, ok: true, result });
  } catch (error) {
    parentPort.postMessage({ id: message.id, ok: false, error: plainError(error) });
  }
});
