import { asc, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execRows, getDb, openPostgres, type Db } from "@/db/client";
import { runs } from "@/db/schema";
import { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { claimNextRun, heartbeat, isUniqueViolation, reclaimOwnRun } from "@/lib/engine/pg/queue";
import { newId } from "@/lib/ids";
import { createTestAccount } from "@/test/support/accounts";
import { emailEveryRowGraph, insertUpload, insertWorkflow } from "./helpers";

/**
 * On PostgreSQL (TEST_DATABASE_URL) every claimer uses its own connection pool, so the claims really race in the
 * server; on PGlite they interleave in one session, which still checks the query's logic.
 */
let pools: { db: Db; close: () => Promise<void> }[] = [];

beforeAll(async () => {
  const url = process.env.TEST_DATABASE_URL ? process.env.TEST_DATABASE_CURRENT_URL : undefined;
  if (url) pools = await Promise.all(Array.from({ length: 4 }, () => openPostgres(url, { max: 4 })));
  else pools = [{ db: await getDb(), close: async () => {} }];
});

afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
});

const graphFor = emailEveryRowGraph;

async function workflowWithRuns(count: number) {
  const account = await createTestAccount();
  const uploadId = await insertUpload(account.id, ["email"], [["q@example.com"]]);
  const graph = graphFor(uploadId);
  const workflowId = await insertWorkflow(account.id, graph);
  const db = await getDb();
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = newId("run");
    await db.insert(runs).values({ id, workflowId, accountId: account.id, workflowVersion: 1, graph });
    ids.push(id);
  }
  return { workflowId, ids, accountId: account.id };
}

async function raceClaims(workflowId: string, claimers = 16) {
  const results = await Promise.all(Array.from({ length: claimers }, (_, i) => claimNextRun(pools[i % pools.length].db, workflowId)));
  return results.filter((r) => r !== null).map((r) => r!.runId);
}

const setStatus = async (runId: string, status: "SUCCESS" | "FAILED") =>
  (await getDb()).update(runs).set({ status, completedAt: new Date() }).where(eq(runs.id, runId));

describe("the Postgres run queue", () => {
  it("gives the oldest PENDING run to exactly one of many concurrent claimers", async () => {
    const { workflowId, ids } = await workflowWithRuns(5);
    expect(await raceClaims(workflowId)).toEqual([ids[0]]);
    const running = await (await getDb()).select({ id: runs.id }).from(runs).where(eq(runs.status, "RUNNING"));
    expect(running.map((r) => r.id)).toContain(ids[0]);
    // While it runs, nobody claims anything of this workflow.
    expect(await raceClaims(workflowId)).toEqual([]);
  });

  it("claims in strict enqueue order, and a FAILED run releases the queue at once", async () => {
    const { workflowId, ids } = await workflowWithRuns(6);
    const order: string[] = [];
    for (let i = 0; i < ids.length; i++) {
      const claimed = await raceClaims(workflowId, 8);
      expect(claimed).toHaveLength(1);
      order.push(claimed[0]);
      await setStatus(claimed[0], i % 2 === 0 ? "FAILED" : "SUCCESS");
    }
    expect(order).toEqual(ids);
    expect(await raceClaims(workflowId)).toEqual([]);
  });

  it("claims runs of different workflows independently", async () => {
    const one = await workflowWithRuns(2);
    const two = await workflowWithRuns(2);
    const [a, b] = await Promise.all([raceClaims(one.workflowId), raceClaims(two.workflowId)]);
    expect(a).toEqual([one.ids[0]]);
    expect(b).toEqual([two.ids[0]]);
  });

  it("has the unique partial index as the backstop: a second RUNNING run of a workflow is refused", async () => {
    const { ids } = await workflowWithRuns(2);
    const db = await getDb();
    await db.update(runs).set({ status: "RUNNING" }).where(eq(runs.id, ids[0]));
    const error = await db
      .update(runs)
      .set({ status: "RUNNING" })
      .where(eq(runs.id, ids[1]))
      .then(() => null, (e: unknown) => e);
    expect(isUniqueViolation(error)).toBe(true);
  });
});

describe("the embedded executor", () => {
  it("runs each workflow's runs one at a time in enqueue order while workflows run in parallel, and the sweep finds runs nobody woke", async () => {
    const workloads = await Promise.all([workflowWithRuns(4), workflowWithRuns(4), workflowWithRuns(4)]);
    // No wake-up was sent for these runs: only the sweep can find them.
    const executor = new EmbeddedExecutor({ getDb, concurrency: 3, sweepIntervalMs: 3_600_000 });
    await executor.sweep();
    await executor.idle();
    const db = await getDb();
    for (const { workflowId, ids } of workloads) {
      const rows = await db.select().from(runs).where(eq(runs.workflowId, workflowId)).orderBy(asc(runs.startedAt));
      expect(rows.map((r) => r.id)).toEqual(ids);
      expect(rows.every((r) => r.status === "SUCCESS")).toBe(true);
      for (let i = 1; i < rows.length; i++) {
        expect(rows[i].startedAt!.getTime()).toBeGreaterThanOrEqual(rows[i - 1].completedAt!.getTime());
      }
    }
    // Each run sent its one email once (the mailbox transport, as no RESEND_API_KEY is set here).
    const runIds = workloads.flatMap((w) => w.ids);
    const delivered = await execRows<{ key: string }>(db, sql`select idempotency_key as key from mailbox_messages`);
    expect(delivered.map((d) => d.key).filter((k) => runIds.some((id) => k.startsWith(id))).sort()).toEqual(runIds.map((id) => `${id}:out:0`).sort());
    await executor.stop();
  });
});

describe("reclaimOwnRun (resuming after a lost database)", () => {
  it("re-confirms a run this process holds, and refuses one another process took over or that finished", async () => {
    const db = await getDb();
    const { workflowId, ids } = await workflowWithRuns(2);
    const claimed = await claimNextRun(db, workflowId);
    expect(claimed?.runId).toBe(ids[0]);
    expect(await reclaimOwnRun(db, ids[0])).toBe(true);
    expect(await heartbeat(db, ids[0])).toBe(true);
    expect(await reclaimOwnRun(db, ids[0])).toBe(true); // the heartbeat it wrote last is still there

    // Another process's takeover writes a heartbeat of its own.
    await db.execute(sql`update runs set heartbeat_at = heartbeat_at + interval '1 second' where id = ${ids[0]}`);
    expect(await reclaimOwnRun(db, ids[0])).toBe(false);

    // A run this process never claimed, and one that finished.
    expect(await reclaimOwnRun(db, ids[1])).toBe(false);
    await setStatus(ids[0], "SUCCESS");
    const next = await claimNextRun(db, workflowId);
    expect(next?.runId).toBe(ids[1]);
    await setStatus(ids[1], "SUCCESS");
    expect(await reclaimOwnRun(db, ids[1])).toBe(false);
  });
});
