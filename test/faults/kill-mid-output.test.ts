/**
 * Fault: the executor process is killed with SIGKILL in the middle of an OUTPUT node sending 5,000 emails, and a
 * fresh process takes over. A real second process (test/faults/worker.ts under tsx) runs the embedded executor.
 * The kill lands at a known point: a gate in front of the fake Resend forwards the first batches and holds the next
 * ones; once a batch is held the worker is killed, then the held batches are delivered anyway (the provider accepted
 * them, but the dead worker never recorded it in the ledger) — the worst case for duplicates.
 * On PostgreSQL (TEST_DATABASE_URL) the workers share the test's database with the test process. PGlite cannot be
 * shared between processes, so there the test writes to a PGlite data directory, closes it, and the two workers open
 * it one after the other (the second takes over the dead one's lock file).
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execRows, type Db } from "@/db/client";
import { resetConfig } from "@/lib/config";
import { createTestAccount } from "@/test/support/accounts";
import { startFakeResend, type FakeResend } from "@/test/support/fake-resend";
import { emailEveryRowGraph, enqueue, insertUpload, insertWorkflow } from "@/test/runs/helpers";
import { inWorkerDatabase, startExecutorWorker, withTimeout } from "./executor-worker";
import { startGate, waitFor, type Gate } from "./gate";

const EMAILS = 5000;

let resend: FakeResend;
let gate: Gate;

beforeAll(async () => {
  resend = await startFakeResend();
  gate = await startGate(resend.url);
});

afterAll(async () => {
  await gate.close();
  await resend.close();
});

/** An account, a 5,000-row upload, a DATA_SOURCE → OUTPUT workflow and one enqueued run (through the real route). */
async function enqueueBigRun(): Promise<string> {
  const { id, token } = await createTestAccount();
  const rows = Array.from({ length: EMAILS }, (_, i) => [`person${i}@example.com`, `P${i}`]);
  const uploadId = await insertUpload(id, ["email", "name"], rows, 1000);
  const workflowId = await insertWorkflow(id, emailEveryRowGraph(uploadId, { subject: "Hi {{item.name}}", body: "b" }));
  const res = await enqueue(token, workflowId);
  expect(res.status).toBe(202);
  return res.body.runId as string;
}

async function runState(db: Db, runId: string) {
  const [run] = await execRows<{ status: string }>(db, sql`select status from runs where id = ${runId}`);
  const [ledger] = await execRows<{ sent: number; total: number }>(
    db,
    sql`select count(*) filter (where status = 'sent')::int as sent, count(*)::int as total from email_sends where run_id = ${runId}`,
  );
  const stuck = await execRows(db, sql`select 1 from node_results where run_id = ${runId} and status in ('RUNNING', 'PENDING')`);
  return { status: run.status, sent: Number(ledger.sent), total: Number(ledger.total), stuckNodes: stuck.length };
}

describe("kill -9 of the executor process mid-OUTPUT", () => {
  it(`restarts and ends SUCCESS with exactly ${EMAILS} distinct emails at the provider`, async () => {
    // PGlite: the whole setup goes into a data directory the workers will open after the test closes it.
    const { value: runId, workerEnv, openForCheck } = await inWorkerDatabase("flowmail-fault-", async () => {
      process.env.EMAIL_DAILY_QUOTA = "1000000";
      resetConfig();
      return enqueueBigRun();
    });
    const startWorker = (env: Record<string, string>) => startExecutorWorker(gate.url, env);

    // First worker: 8 batches get through, the next ones are held at the gate, then the process dies.
    gate.holdAfter(8);
    const doomed = startWorker(workerEnv);
    await withTimeout("a held batch", Promise.race([gate.waitForHeld(1, 90_000), doomed.exited.then((c) => Promise.reject(new Error(`worker exited: ${c}`)))]), 95_000);
    await waitFor("the 8 forwarded batches to be delivered", () => resend.emails().length >= 800);
    doomed.child.kill("SIGKILL");
    expect(await doomed.exited).toBe("SIGKILL");
    const heldBatches = gate.held();
    await gate.release(); // delivered although nobody will record them: the restart must not send them again
    const deliveredBeforeRestart = resend.emails().length;
    expect(deliveredBeforeRestart).toBe(800 + heldBatches * 100);
    expect(deliveredBeforeRestart).toBeLessThan(EMAILS);

    // A fresh process takes over the RUNNING run and works until idle.
    const restarted = startWorker(workerEnv);
    expect(await withTimeout("the restarted worker to finish", restarted.exited, 120_000)).toBe(0);

    const checkDb = await openForCheck();
    try {
      expect(await runState(checkDb.db, runId)).toEqual({ status: "SUCCESS", sent: EMAILS, total: EMAILS, stuckNodes: 0 });
    } finally {
      await checkDb.close();
    }

    const emails = resend.emails();
    expect(emails).toHaveLength(EMAILS);
    expect(new Set(emails.map((e) => e.to[0])).size).toBe(EMAILS);
    // Every batch key delivered exactly one batch of 100: nothing re-delivered under a new key.
    const perKey = new Map<string, number>();
    for (const e of emails) perKey.set(e.idempotencyKey!, (perKey.get(e.idempotencyKey!) ?? 0) + 1);
    expect(perKey.size).toBe(EMAILS / 100);
    expect([...perKey.values()].every((n) => n === 100)).toBe(true);
    // The held batches really were sent twice by the application (once by the dead worker, once after the restart).
    const batchRequests = resend.requests.filter((r) => r.path === "/emails/batch" && r.status === 200);
    expect(batchRequests.length).toBeGreaterThanOrEqual(EMAILS / 100 + heldBatches);
  });
});
