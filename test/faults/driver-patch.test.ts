/**
 * postgres.js 3.4.9, patched at install (patches/postgres+3.4.9.patch, applied by patch-package): a transaction whose backend dies mid-query
 * must fail with CONNECTION_CLOSED and leave its pooled connection usable. Unpatched, the driver throws an uncaught
 * TypeError (which fails this file: vitest reports unhandled errors) and every later query on that connection hangs.
 * PostgreSQL only (TEST_DATABASE_URL).
 */
import postgres from "postgres";
import { describe, expect, it } from "vitest";

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

function within<T>(promise: Promise<T>, ms: number): Promise<T | "timed out"> {
  return Promise.race([promise, new Promise<"timed out">((resolve) => setTimeout(() => resolve("timed out"), ms).unref())]);
}

describe.runIf(onPostgres)("postgres.js with a transaction's connection terminated (PostgreSQL)", () => {
  it("rejects the transaction and answers the next queries on the same pooled connection", async () => {
    const url = process.env.TEST_DATABASE_CURRENT_URL!;
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    const killer = postgres(url, { max: 1 });
    try {
      let pid: number | null = null;
      const tx = sql.begin(async (t) => {
        const [row] = await t<{ pid: number }[]>`select pg_backend_pid() as pid`;
        pid = row.pid;
        await t`select pg_sleep(5)`;
      });
      const outcome = tx.then(
        () => "committed",
        (error: { code?: string }) => error.code,
      );
      while (pid === null) await new Promise((resolve) => setTimeout(resolve, 20));
      await killer`select pg_terminate_backend(${pid})`;
      expect(await within(outcome, 10_000)).toBe("CONNECTION_CLOSED");
      for (let i = 0; i < 3; i++) {
        const rows = await within(sql<{ v: number }[]>`select ${i}::int as v`, 10_000);
        expect(rows).toEqual([{ v: i }]);
      }
    } finally {
      await sql.end({ timeout: 1 });
      await killer.end({ timeout: 1 });
    }
  });
});
