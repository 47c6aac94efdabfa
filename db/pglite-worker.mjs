// The embedded database in its own thread (db/client.ts, openPgliteInWorker). PGlite executes every statement
// synchronously in WASM: on the server's main thread one 11 MB node output held every HTTP request for ~300 ms
// (bench/freeze.ts). Here it runs beside the event loop; the main thread sends statements and receives their rows.
// Plain JavaScript, loaded by path at run time (no bundler in between).
import { parentPort, workerData } from "node:worker_threads";
import { PGlite, parse, protocol, types } from "@electric-sql/pglite";

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
/** Transactions by id: a promise settled once the transaction has ended (committed, rolled back, or never begun). */
const ends = new Map();

/*
 * Named prepared statements, as postgres.js makes on PostgreSQL (db/client.ts, withPreparedStatements). PGlite's
 * query() parses, plans and describes every statement anew (an unnamed statement), and in WASM that is most of a small
 * statement's time: a statement of five CTEs took 1.6 ms through query() and 0.4 ms bound to a named one. A statement
 * outside a transaction with at most MAX_PREPARED_PARAMETERS parameters is parsed and described once under a name, then
 * bound and executed: the steps of PGlite's own query() (same serializers, parsers and sync to the file system), with
 * Parse once. PostgreSQL replans a named statement whose tables changed; one it cannot use any more (a result type that
 * changed, a name unknown) is forgotten and the statement runs through query().
 */
const MAX_PREPARED_PARAMETERS = 32;
const MAX_PREPARED_STATEMENTS = 500;
/** SQL text → { name, types (the parameters' type OIDs) }. */
const prepared = new Map();
let preparedCount = 0;
const wire = protocol.serialize;
const exec = async (message) => (await pg.execProtocol(message, { syncToFs: false })).messages;

async function preparedQuery(sql, params, options) {
  await pg.waitReady;
  let stale = false;
  // The locks PGlite's query() takes: no statement of ours can land inside a transaction of its API.
  const result = await pg._runExclusiveTransaction(() => pg._runExclusiveQuery(async () => {
    let entry = prepared.get(sql);
    const messages = [];
    try {
      if (!entry) {
        if (prepared.size >= MAX_PREPARED_STATEMENTS) {
          for (const { name } of prepared.values()) await exec(wire.close({ type: "S", name }));
          prepared.clear();
        }
        const name = `flowmail_${++preparedCount}`;
        await exec(wire.parse({ name, text: sql, types: [] }));
        entry = { name, types: parse.parseDescribeStatementResults(await exec(wire.describe({ type: "S", name }))) };
        prepared.set(sql, entry);
      }
      const values = params.map((value, i) => {
        if (value === null || value === undefined) return null;
        const serializer = pg.serializers[entry.types[i]];
        return serializer ? serializer(value) : value.toString();
      });
      messages.push(...(await exec(wire.bind({ statement: entry.name, values }))));
      messages.push(...(await exec(wire.describe({ type: "P" }))));
      messages.push(...(await exec(wire.execute({}))));
    } catch (error) {
      // 26000: no such prepared statement; 0A000: "cached plan must not change result type".
      if (entry && (error?.code === "26000" || error?.code === "0A000")) {
        prepared.delete(sql);
        stale = true;
      } else throw error;
    } finally {
      messages.push(...(await exec(wire.sync())));
    }
    if (stale) return undefined;
    await pg.syncToFs();
    return parse.parseResults(messages, pg.parsers, options)[0];
  }));
  return stale ? pg.query(sql, params, options) : result;
}

const handlers = {
  async query({ sql, params, rowMode, parsers, tx }) {
    const options = { rowMode, ...(parsers ? { parsers: drizzleParsers } : {}) };
    const result =
      !tx && (params?.length ?? 0) <= MAX_PREPARED_PARAMETERS
        ? await preparedQuery(sql, params ?? [], options)
        : await (tx ? transactions.get(tx).tx : pg).query(sql, params, options);
    return { rows: result.rows, fields: result.fields, affectedRows: result.affectedRows };
  },
  async exec({ sql, tx }) {
    const target = tx ? transactions.get(tx).tx : pg;
    return (await target.exec(sql)).map((r) => ({ rows: r.rows, fields: r.fields, affectedRows: r.affectedRows }));
  },
  begin({ tx: id }) {
    // Answers once BEGIN has run (PGlite's lock held); the transaction's end is answered under the id `end:<id>`.
    return new Promise((began, failed) => {
      let opened = false;
      const ended = pg.transaction(
        (tx) =>
          new Promise((commit, rollback) => {
            opened = true;
            transactions.set(id, { tx, commit, rollback });
            began(true);
          }),
      );
      const settled = ended
        .then(
          () => parentPort.postMessage({ id: `end:${id}`, ok: true }),
          (error) => {
            parentPort.postMessage({ id: `end:${id}`, ok: false, error: plainError(error) });
            if (!opened) failed(error);
          },
        )
        .finally(() => {
          transactions.delete(id);
          ends.delete(id);
        });
      ends.set(id, settled);
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

/*
 * Two lanes, one statement at a time. The app's requests come on lane 0, the run engine's work on lane 1
 * (db/pglite-in-worker.ts, `lane`): PGlite has one connection, and in arrival order a request's statement waited behind
 * every statement a big run had queued (100–500 ms at the start of a 100,000-row run, bench/freeze.ts). Now it waits
 * for at most the one statement being executed. While a transaction is open only its own statements (and its end) are
 * taken, in their order, whatever their lane: PGlite's lock would hold any other until the transaction ends.
 */
const lanes = [[], []];
let busy = false;
/** The id of the open transaction (from its BEGIN to the end of its COMMIT or ROLLBACK), or undefined. */
let openTx;

function next() {
  if (openTx !== undefined) {
    for (const lane of lanes) {
      const at = lane.findIndex((m) => m.tx === openTx);
      if (at !== -1) return lane.splice(at, 1)[0];
    }
    return undefined;
  }
  return lanes[0].shift() ?? lanes[1].shift();
}

function pump() {
  if (busy) return;
  const message = next();
  if (!message) return;
  busy = true;
  if (message.op === "begin") openTx = message.tx;
  execute(message).finally(() => {
    if (message.op === "begin") {
      // The transaction stays open until its COMMIT or ROLLBACK has run (or BEGIN failed).
      const release = () => {
        if (openTx === message.tx) openTx = undefined;
        schedulePump();
      };
      const end = ends.get(message.tx);
      if (end) end.then(release);
      else release();
    }
    busy = false;
    schedulePump();
  });
}

// PGLITE_TRACE_MS=N: every statement that held the thread N ms or more is written to stderr with the time it ended,
// its lane, how long it waited in its lane and the start of its SQL (a diagnostic for bench/freeze.ts).
const traceMs = process.env.PGLITE_TRACE_MS ? Number(process.env.PGLITE_TRACE_MS) : undefined;

async function execute(message) {
  const began = traceMs === undefined ? 0 : performance.now();
  try {
    const result = await handlers[message.op](message);
    if (traceMs !== undefined) trace(message, began);
    parentPort.postMessage({ id: message.id, ok: true, result });
  } catch (error) {
    parentPort.postMessage({ id: message.id, ok: false, error: plainError(error) });
  }
}

// Messages that waited in the port while a statement held the thread arrive one after the other: the choice of the
// next statement is made once they are all in their lanes (setImmediate runs after the port's pending messages).
let scheduled = false;
function schedulePump() {
  if (scheduled) return;
  scheduled = true;
  setImmediate(() => {
    scheduled = false;
    pump();
  });
}

function trace(message, began) {
  const ms = performance.now() - began;
  if (ms < traceMs) return;
  const what = (message.sql ?? message.op).replace(/\s+/g, " ").slice(0, 160);
  process.stderr.write(`[pglite] ${new Date().toISOString()} lane=${message.lane ?? 0} waited=${(began - message.arrived).toFixed(0)}ms held=${ms.toFixed(1)}ms ${what}\n`);
}

parentPort.on("message", (message) => {
  if (traceMs !== undefined) message.arrived = performance.now();
  lanes[message.lane === 1 ? 1 : 0].push(message);
  schedulePump();
});
