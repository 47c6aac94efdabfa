import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execRows, openPgliteWorker, type DbHandle } from "./client";

// The server's embedded database runs PGlite in a worker thread (db/pglite-worker.mjs): the same drizzle interface,
// errors with their SQLSTATE, transactions that commit, roll back and keep other statements out until they end.
describe("PGlite in a worker thread", () => {
  let handle: DbHandle;
  beforeAll(async () => {
    handle = await openPgliteWorker(undefined); // in memory, migrated
  }, 120_000);
  afterAll(async () => {
    await handle?.close();
  });

  it("runs drizzle statements, migrations included, and keeps the SQLSTATE of an error", async () => {
    const [row] = await execRows<{ n: number }>(handle.db, sql`select count(*)::int as n from accounts`);
    expect(row.n).toBe(0);
    const error = await handle.db.execute(sql`insert into accounts (id) values (null)`).catch((e: unknown) => e);
    const codes = [(error as { code?: string }).code, (error as { cause?: { code?: string } }).cause?.code];
    expect(codes).toContain("23502"); // not_null_violation
  });

  it("binds a repeated statement to one prepared statement with the same answers as a fresh one, and recovers from errors and a changed table", async () => {
    await handle.db.execute(sql`create table t_prepared (id int primary key, at timestamptz, doc jsonb, tags text[], n numeric)`);
    await handle.db.execute(sql`insert into t_prepared values (1, '2026-11-26T10:00:00Z', '{"a":[1,2]}', '{x,y}', 1.5)`);
    const read = (id: number) =>
      execRows(handle.db, sql`with r as (select * from t_prepared where id = ${id}) select id, at, doc, tags, n, (select count(*)::int from r) as c from r`);
    const first = await read(1);
    const again = await read(1); // the same text: bound to the statement prepared by the first
    expect(again).toEqual(first);
    const named = await execRows<{ name: string }>(handle.db, sql`select name from pg_prepared_statements where statement like ${"with r as (select * from t_prepared%"}`);
    expect(named).toHaveLength(1);
    // drizzle's parsers (timestamps as text), JSON and arrays parsed, numeric as text, as through PGlite's query().
    expect(first).toEqual([{ id: 1, at: "2026-11-26 10:00:00+00", doc: { a: [1, 2] }, tags: ["x", "y"], n: "1.5", c: 1 }]);
    // Parameters of every kind go through PGlite's serializers: a Date, an object for jsonb, an array, null.
    await handle.db.execute(sql`insert into t_prepared values (${2}, ${new Date("2026-01-02T03:04:05Z").toISOString()}, ${JSON.stringify({ b: true })}, ${"{z}"}, ${null})`);
    expect(await read(2)).toEqual([{ id: 2, at: "2026-01-02 03:04:05+00", doc: { b: true }, tags: ["z"], n: null, c: 1 }]);
    // An error in a prepared statement keeps its SQLSTATE, and the statement works afterwards.
    const insert = (id: number) => handle.db.execute(sql`insert into t_prepared (id) values (${id})`);
    await insert(3);
    const duplicate = await insert(3).catch((e: unknown) => e);
    expect([(duplicate as { code?: string }).code, (duplicate as { cause?: { code?: string } }).cause?.code]).toContain("23505");
    await insert(4);
    // A table whose columns changed: the prepared statement's result type is stale; the statement still answers.
    await handle.db.execute(sql`alter table t_prepared add column extra text default 'e'`);
    const star = () => execRows(handle.db, sql`select * from t_prepared where id = ${1}`);
    await handle.db.execute(sql`alter table t_prepared drop column extra`);
    const before = await star();
    await handle.db.execute(sql`alter table t_prepared add column extra text default 'e'`);
    expect(await star()).toEqual([{ ...before[0], extra: "e" }]);
  });

  it("commits, rolls back, and holds statements from outside a transaction until it ends", async () => {
    await handle.db.execute(sql`create table t_worker (v int)`);
    await handle.db.transaction(async (tx) => {
      await tx.execute(sql`insert into t_worker values (1)`);
    });
    await expect(
      handle.db.transaction(async (tx) => {
        await tx.execute(sql`insert into t_worker values (2)`);
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    const order: string[] = [];
    let outside: Promise<unknown> | undefined;
    await handle.db.transaction(async (tx) => {
      await tx.execute(sql`insert into t_worker values (3)`);
      outside = execRows<{ n: number }>(handle.db, sql`select count(*)::int as n from t_worker`).then((rows) => order.push(`outside saw ${rows[0].n}`));
      await new Promise((r) => setTimeout(r, 50));
      order.push("transaction ends");
    });
    await outside;
    // The outside statement waited for the commit, and then saw its row.
    expect(order).toEqual(["transaction ends", "outside saw 2"]);
    const rows = await execRows<{ v: number }>(handle.db, sql`select v from t_worker order by v`);
    expect(rows.map((r) => r.v)).toEqual([1, 3]);
  });

  it("takes a request's statement before the background lane's queued ones, and keeps a transaction's statements together", async () => {
    const background = handle.backgroundDb!;
    expect(background).toBeDefined();
    await handle.db.execute(sql`create table t_lanes (v text)`);
    const order: string[] = [];
    // A slow background statement holds the worker; ten more queue behind it.
    const slow = background.execute(sql`select pg_sleep(0.2)`).then(() => order.push("bg slow"));
    const queued = Array.from({ length: 10 }, (_, i) => background.execute(sql`insert into t_lanes values (${`bg${i}`})`).then(() => order.push(`bg${i}`)));
    await new Promise((r) => setTimeout(r, 50));
    const request = handle.db.execute(sql`insert into t_lanes values ('request')`).then(() => order.push("request"));
    await Promise.all([slow, request, ...queued]);
    // The request waited for the statement being executed, not for the ten queued before it.
    expect(order.slice(0, 2)).toEqual(["bg slow", "request"]);
    expect(order.slice(2)).toEqual(Array.from({ length: 10 }, (_, i) => `bg${i}`));

    // A background transaction keeps its lock: a request's statement sent meanwhile runs after its commit, and sees it.
    const seen: string[] = [];
    await background.transaction(async (tx) => {
      await tx.execute(sql`insert into t_lanes values ('in tx')`);
      const outside = execRows<{ n: number }>(handle.db, sql`select count(*)::int as n from t_lanes where v = 'in tx'`).then((rows) => seen.push(`request saw ${rows[0].n}`));
      await new Promise((r) => setTimeout(r, 50));
      await tx.execute(sql`insert into t_lanes values ('in tx 2')`);
      seen.push("commit");
      void outside;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(seen).toEqual(["commit", "request saw 1"]);
    // And a request's transaction in turn holds the background lane out.
    await handle.db.transaction(async (tx) => {
      await tx.execute(sql`delete from t_lanes`);
      const bg = execRows<{ n: number }>(background, sql`select count(*)::int as n from t_lanes`);
      await new Promise((r) => setTimeout(r, 30));
      await tx.execute(sql`insert into t_lanes values ('after')`);
      seen.push(`bg sees ${(await Promise.race([bg.then((r) => r[0].n), new Promise((r) => setTimeout(() => r("nothing yet"), 20))]))}`);
    });
    expect(seen.at(-1)).toBe("bg sees nothing yet");
    const [after] = await execRows<{ n: number }>(background, sql`select count(*)::int as n from t_lanes`);
    expect(after.n).toBe(1);
  });
});

// npm start's semi-space flags (64 MB) are the process's: the database thread starts with small ones, and threads
// started after it get the process's again.
describe("the database thread's young generation", () => {
  it("is small under npm start's flags, and a thread started later has the process's", async () => {
    const { spawnSync } = await import("node:child_process");
    const path = await import("node:path");
    const source = path.join(process.cwd(), "db", "pglite-in-worker.ts");
    // Each thread allocates short-lived objects until its young generation has grown, then answers its size in MB.
    const script = `
      const { Worker } = require("node:worker_threads");
      const churn = \`
        const v8 = require("node:v8");
        let keep = [];
        for (let i = 0; i < 4e6; i++) { keep.push({ i, s: "x" + i }); if (keep.length > 300000) keep = []; }
        const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
        require("node:worker_threads").parentPort.postMessage(Math.round(space.space_size / 2 ** 20));\`;
      const size = (worker) => new Promise((resolve) => worker.once("message", (mb) => { resolve(mb); void worker.terminate(); }));
      (async () => {
        const loaded = await import(${JSON.stringify(source)});
        const { startWithSmallYoungGeneration } = loaded.startWithSmallYoungGeneration ? loaded : loaded.default;
        const small = await size(startWithSmallYoungGeneration(() => new Worker(churn, { eval: true })));
        const later = await size(new Worker(churn, { eval: true }));
        process.stdout.write(JSON.stringify({ small, later }));
      })();`;
    const child = spawnSync(process.execPath, ["--min-semi-space-size=16", "--max-semi-space-size=64", "--conditions=react-server", "--import", "tsx", "-e", script], {
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(child.stderr).toBe("");
    const { small, later } = JSON.parse(child.stdout) as { small: number; later: number };
    expect(small).toBeLessThanOrEqual(16); // two semi-spaces of at most 8 MB
    expect(later).toBeGreaterThanOrEqual(32); // two of at least the process's 16 MB
  }, 120_000);
});
