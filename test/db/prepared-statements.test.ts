// drizzle asks postgres.js for unnamed statements, which cost two round trips each when they have parameters;
// db/client.ts wraps the client so that small statements are prepared (in transactions too), unless
// DATABASE_PREPARED_STATEMENTS=false. PostgreSQL only (TEST_DATABASE_URL).
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { execRows, openPostgres } from "@/db/client";

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

async function preparedCount(preparedStatements: boolean | undefined): Promise<{ plain: number; inTransaction: number; bulk: number }> {
  const handle = await openPostgres(process.env.TEST_DATABASE_CURRENT_URL!, { max: 1, preparedStatements });
  try {
    const count = async () =>
      Number((await execRows<{ n: number }>(handle.db, sql`select count(*)::int as n from pg_prepared_statements where statement like '%flowmail-probe%' and statement not like '%pg_prepared_statements%'`))[0].n);
    await execRows(handle.db, sql`select ${1}::int as v /* flowmail-probe plain */`);
    const plain = await count();
    await handle.db.transaction(async (tx) => {
      await tx.execute(sql`select ${2}::int as v /* flowmail-probe tx */`);
    });
    const inTransaction = (await count()) - plain;
    const many = Array.from({ length: 40 }, (_, i) => sql`${i}::int`);
    await execRows(handle.db, sql`select array[${sql.join(many, sql`, `)}] as v /* flowmail-probe bulk */`);
    const bulk = (await count()) - plain - inTransaction;
    return { plain, inTransaction, bulk };
  } finally {
    await handle.close();
  }
}

describe.runIf(onPostgres)("prepared statements on PostgreSQL", () => {
  it("prepares small statements, in transactions too, but not statements with many parameters", async () => {
    expect(await preparedCount(undefined)).toEqual({ plain: 1, inTransaction: 1, bulk: 0 });
  });

  it("prepares nothing with preparedStatements: false (DATABASE_PREPARED_STATEMENTS=false)", async () => {
    expect(await preparedCount(false)).toEqual({ plain: 0, inTransaction: 0, bulk: 0 });
  });
});
