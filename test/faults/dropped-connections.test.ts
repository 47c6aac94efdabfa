/**
 * Fault: the database goes away under a running run. Restarting the shared PostgreSQL server of CI/dev machines is
 * not safe, so this test substitutes what a restart does to the application: every backend connection of the test
 * database is terminated (`pg_terminate_backend`) while the run executes, with one of the executor's queries
 * guaranteed in flight — it is blocked on a table lock held by the test's own session (kept alive so it can roll
 * back and release the lock; a terminated postgres.js transaction connection throws an uncaught TypeError inside
 * the driver, which would crash the test process) when the connections drop.
 * Expected: the executor gives the run up without failing its node, the sweep (called directly, staleness 0 s)
 * resumes it to SUCCESS with exactly N emails, each once, nothing is left RUNNING, and the next run executes normally.
 * PostgreSQL only (TEST_DATABASE_URL): PGlite runs in this process and has no connections to drop.
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execRows, getDb, openPostgres } from "@/db/client";
import type { EmbeddedExecutor } from "@/lib/engine/embedded-executor";
import { isConnectionLoss } from "@/lib/engine/queue";
import { createTestAccount } from "@/test/support/accounts";
import { clearResendTransport, startFakeResend, useResendTransport, type FakeResend } from "@/test/support/fake-resend";
import { enqueue, getRun, insertUpload, insertWorkflow, runToEnd, startTestExecutor, stopTestExecutor, trigger } from "@/test/runs/helpers";
import { startGate, waitFor, type Gate } from "./gate";

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
const N = 1000;

let resend: FakeResend;
let gate: Gate;
let executor: EmbeddedExecutor;

beforeAll(async () => {
  resend = await startFakeResend();
  gate = await startGate(resend.url);
  useResendTransport(gate.url);
  executor = startTestExecutor(2);
});

afterAll(async () => {
  await stopTestExecutor();
  await gate.close();
  await resend.close();
  clearResendTransport();
});

function withTimeout<T>(what: string, promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms).unref())]);
}

describe.runIf(onPostgres)("database connections dropped mid-run (PostgreSQL)", () => {
  it("the run ends cleanly, nothing stays RUNNING after the sweep, and the queue continues", async () => {
    const url = process.env.TEST_DATABASE_CURRENT_URL!;
    const { id, token } = await createTestAccount();
    const rows = Array.from({ length: N }, (_, i) => [`d${i}@example.com`]);
    const uploadId = await insertUpload(id, ["email"], rows);
    const workflowId = await insertWorkflow(id, {
      nodes: [
        trigger,
        { id: "src", type: "DATA_SOURCE", data: { uploadId } },
        { id: "out", type: "OUTPUT", data: { forEach: "{{src.rows}}", to: "{{item.email}}", subject: "s", body: "b" } },
      ],
      edges: [
        { source: "t", target: "src" },
        { source: "src", target: "out" },
      ],
    });
    const locker = await openPostgres(url, { max: 1 });
    const killer = await openPostgres(url, { max: 1 });
    try {
      gate.holdAfter(3);
      const res = await enqueue(token, workflowId);
      expect(res.status).toBe(202);
      const runId = res.body.runId as string;
      await gate.waitForHeld(1);

      // Another session locks the send ledger; the held batch is answered, so the executor's ledger update blocks.
      const locked = locker.db.transaction(async (tx) => {
        const [{ pid: lockerPid }] = await execRows<{ pid: number }>(tx, sql`select pg_backend_pid() as pid`);
        await tx.execute(sql`lock table email_sends in access exclusive mode`);
        await gate.release();
        await waitFor("an executor query blocked on the lock", async () => {
          const waiting = await execRows(killer.db, sql`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
          return waiting.length > 0;
        });
        // What a server restart does to every session: all connections of this database are dropped.
        const killed = await execRows<{ ok: boolean }>(
          killer.db,
          sql`select pg_terminate_backend(pid) as ok from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and pid <> ${lockerPid}`,
        );
        expect(killed.length).toBeGreaterThanOrEqual(1); // the blocked executor session at least
        throw new Error("roll back: release the lock");
      });
      await expect(locked).rejects.toThrow();

      await withTimeout("the executor to settle", executor.idle(), 120_000);
      const db = await getDb();
      // postgres.js notices a terminated idle connection only when it reads the server's goodbye: until then a query
      // on it fails once with CONNECTION_CLOSED. Wait until the shared pool answers again.
      await waitFor("the pool to reconnect", () =>
        execRows(db, sql`select 1`).then(
          () => true,
          (error: unknown) => (isConnectionLoss(error) ? false : Promise.reject(error)),
        ),
      );
      const [afterDrop] = await execRows<{ status: string }>(db, sql`select status from runs where id = ${runId}`);
      // A lost connection is not the node's fault: the executor gives the run up (RUNNING, not FAILED) and the sweep
      // resumes it (staleness 0 s: nobody works on it), which the send ledger and idempotency keys make safe.
      expect(afterDrop.status).toBe("RUNNING");
      await executor.sweep(0);
      await withTimeout("the resumed run", executor.idle(), 120_000);

      const stuckRuns = await execRows(db, sql`select id from runs where status in ('RUNNING', 'PENDING')`);
      expect(stuckRuns).toEqual([]);
      const stuckNodes = await execRows(db, sql`select node_id from node_results where run_id = ${runId} and status in ('RUNNING', 'PENDING')`);
      expect(stuckNodes).toEqual([]);
      const run = (await getRun(token, runId)).body;
      expect(run.status).toBe("SUCCESS");
      expect(run.result.emailsSent).toBe(N);
      const recipients = resend.emails().map((e) => e.to[0]);
      expect(recipients).toHaveLength(N);
      expect(new Set(recipients)).toEqual(new Set(rows.map((r) => r[0])));

      // The queue continues: the workflow's next run executes normally on fresh connections.
      resend.reset();
      const next = await runToEnd(executor, token, workflowId);
      expect(next.status).toBe("SUCCESS");
      expect(resend.emails()).toHaveLength(N);
    } finally {
      await locker.close().catch(() => {});
      await killer.close().catch(() => {});
    }
  });
});
