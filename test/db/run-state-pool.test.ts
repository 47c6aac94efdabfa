// db/client.ts: on PostgreSQL the run engine's own writes go through a pool with synchronous_commit=off (runStateDb);
// DATABASE_ASYNC_RUN_STATE=false turns it off, and a server (or pooler) that refuses the startup parameter falls back
// to the ordinary pool. PostgreSQL only (TEST_DATABASE_URL).
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { execRows, openPostgres, type Db } from "@/db/client";

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
const setting = async (db: Db) => (await execRows<{ v: string }>(db, sql`select current_setting('synchronous_commit') as v`))[0].v;

describe.runIf(onPostgres)("the run-state pool", () => {
  it("commits without waiting for the WAL flush; the ordinary pool stays durable", async () => {
    const handle = await openPostgres(process.env.TEST_DATABASE_CURRENT_URL!, { max: 1 });
    try {
      expect(await setting(handle.db)).toBe("on");
      expect(await setting(await handle.runStateDb!())).toBe("off");
    } finally {
      await handle.close();
    }
  });

  it("is not there when DATABASE_ASYNC_RUN_STATE=false", async () => {
    const handle = await openPostgres(process.env.TEST_DATABASE_CURRENT_URL!, { max: 1, asyncRunState: false });
    try {
      expect(handle.runStateDb).toBeUndefined();
    } finally {
      await handle.close();
    }
  });

  it("falls back to the ordinary pool when the startup parameter is refused", async () => {
    const handle = await openPostgres(process.env.TEST_DATABASE_CURRENT_URL!, { max: 1, runStateConnection: { synchronous_commit: "sometimes" } });
    try {
      const db = await handle.runStateDb!();
      expect(db).toBe(handle.db);
      expect(await setting(db)).toBe("on");
    } finally {
      await handle.close();
    }
  });
});
