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
});
