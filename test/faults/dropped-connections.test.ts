/**
 * Fault: every connection of the database is dropped under a running run (`pg_terminate_backend`), with one of the
 * executor's queries guaranteed in flight — it is blocked on a table lock held by the test's own session (kept alive
 * so it can roll back and release the lock) when the connections drop. test/faults/pg-restart.test.ts restarts a
 * whole server; this one pins the query-in-flight case on the shared server.
 * Expected: the executor gives the run up without failing its node and resumes it by itself after a short backoff
 * (no sweep, no stale-heartbeat wait) to SUCCESS with exactly N emails, each once; nothing is left RUNNING, and the
 * next run executes normally. PostgreSQL only (TEST_DATABASE_URL): PGlite runs in this process and has no
 * connections to drop.
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execRows, getDb, openPostgres } from "@/db/client";
import { isDatabaseUnavailable } from "@/db/connection-errors";
import type { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { createTestAccount } from "@/test/support/accounts";
import { clearResendTransport, startFakeResend, useResendTransport, type FakeResend } from "@/test/support/fake-resend";
import { emailEveryRowWorkflow, enqueue, getRun, runToEnd, startTestExecutor, stopTestExecutor } from "@/test/runs/helpers";
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
  it("the executor resumes the run by itself: SUCCESS, every email once, nothing RUNNING, and the queue continues", async () => {
    const url = process.env.TEST_DATABASE_CURRENT_URL!;
    const { id, token } = await createTestAccount();
    const { workflowId, addresses } = await emailEveryRowWorkflow(id, N, `d`);
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

      const db = await getDb();
      // A lost connection is not the node's fault: no node FAILED, and the executor resumes the run by itself (the
      // sweep is never called here, and its stale-heartbeat window is 60 s), which the send ledger and idempotency
      // keys make safe. postgres.js notices a terminated idle connection only when it reads the server's goodbye: a
      // query on it may fail once (CONNECTION_CLOSED, or ECONNRESET from the socket), so the polling tolerates that.
      await waitFor(
        "the run to end",
        async () => {
          const found = await execRows<{ status: string }>(db, sql`select status from runs where id = ${runId}`).catch((error: unknown) =>
            isDatabaseUnavailable(error) ? [] : Promise.reject(error),
          );
          return found[0]?.status === "SUCCESS" || found[0]?.status === "FAILED";
        },
        60_000,
      );
      await withTimeout("the executor to settle", executor.idle(), 60_000);

      const stuckRuns = await execRows(db, sql`select id from runs where status in ('RUNNING', 'PENDING')`);
      expect(stuckRuns).toEqual([]);
      const stuckNodes = await execRows(db, sql`select node_id from node_results where run_id = ${runId} and status in ('RUNNING', 'PENDING')`);
      expect(stuckNodes).toEqual([]);
      const run = (await getRun(token, runId)).body;
      expect(run.status).toBe("SUCCESS");
      expect(run.result.emailsSent).toBe(N);
      const recipients = resend.emails().map((e) => e.to[0]);
      expect(recipients).toHaveLength(N);
      expect(new Set(recipients)).toEqual(new Set(addresses));

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
