/**
 * Fault: the executor process is killed with SIGKILL while many small runs send their emails in shared provider calls
 * (lib/nodes/output/shared-send.ts), and a fresh process takes over. As in kill-mid-output.test.ts, a gate in front of
 * the fake Resend forwards the first calls and holds the next ones; once a call is held the worker is killed, then the
 * held calls are delivered anyway (the provider accepted them, but the dead worker never recorded it) — the worst case
 * for duplicates: the restarted process must send each of those calls again under its own key, never a run's emails
 * alone. 40 runs of 40 workflows, 2 emails each, 32 runs at once.
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execRows } from "@/db/client";
import { resetConfig } from "@/lib/config";
import { createTestAccount } from "@/test/support/accounts";
import { startFakeResend, type FakeResend } from "@/test/support/fake-resend";
import { emailEveryRowGraph, enqueue, insertUpload, insertWorkflow } from "@/test/runs/helpers";
import { inWorkerDatabase, startExecutorWorker, withTimeout } from "./executor-worker";
import { startGate, waitFor, type Gate } from "./gate";

const RUNS = 40;
const PER_RUN = 2;

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

describe("kill -9 of the executor process while small runs share provider calls", () => {
  it(`restarts and ends with ${RUNS} runs SUCCESS and each of their ${RUNS * PER_RUN} emails delivered once`, async () => {
    const { value: runIds, workerEnv, openForCheck } = await inWorkerDatabase("flowmail-fault-shared-", async () => {
      process.env.EMAIL_DAILY_QUOTA = "1000000";
      resetConfig();
      const { id, token } = await createTestAccount();
      const ids: string[] = [];
      for (let w = 0; w < RUNS; w++) {
        const uploadId = await insertUpload(id, ["email"], Array.from({ length: PER_RUN }, (_, i) => [`s${w}-${i}@example.com`]));
        const workflowId = await insertWorkflow(id, emailEveryRowGraph(uploadId));
        const res = await enqueue(token, workflowId);
        expect(res.status).toBe(202);
        ids.push(res.body.runId as string);
      }
      return ids;
    });
    const startWorker = (env: Record<string, string>) =>
      startExecutorWorker(gate.url, { ...env, EMAIL_RATE_PER_SECOND: "1000", EXECUTOR_CONCURRENCY: "32", FAULT_EXECUTOR_CONCURRENCY: "32" });

    // First worker: the first shared call gets through, the next ones are held (calls of a batch alone pass), then
    // the process dies.
    gate.holdAfter(1, (r) => r.headers["idempotency-key"]?.startsWith("shared:") ?? false);
    const doomed = startWorker(workerEnv);
    await withTimeout("a held call", Promise.race([gate.waitForHeld(1, 90_000), doomed.exited.then((c) => Promise.reject(new Error(`worker exited: ${c}`)))]), 95_000);
    await waitFor("the forwarded shared call to be answered", () => resend.requests.some((r) => r.headers["idempotency-key"]?.startsWith("shared:")));
    doomed.child.kill("SIGKILL");
    expect(await doomed.exited).toBe("SIGKILL");
    const heldCalls = gate.held();
    await gate.release(); // delivered although nobody will record them
    const deliveredBeforeRestart = resend.emails().length;
    gate.open();

    const restarted = startWorker(workerEnv);
    expect(await withTimeout("the restarted worker to finish", restarted.exited, 120_000)).toBe(0);

    const checkDb = await openForCheck();
    try {
      const runs = await execRows<{ status: string; n: number }>(checkDb.db, sql`select status, count(*)::int as n from runs where id in ${sql.raw(`('${runIds.join("','")}')`)} group by status`);
      expect(runs.map((r) => [r.status, Number(r.n)])).toEqual([["SUCCESS", RUNS]]);
      const rows = await execRows<{ status: string; n: number }>(checkDb.db, sql`select status, count(*)::int as n from email_sends where run_id in ${sql.raw(`('${runIds.join("','")}')`)} group by status`);
      expect(rows.map((r) => [r.status, Number(r.n)])).toEqual([["sent", RUNS * PER_RUN]]);
    } finally {
      await checkDb.close();
    }

    const emails = resend.emails();
    expect(emails).toHaveLength(RUNS * PER_RUN);
    expect(new Set(emails.map((e) => e.to[0])).size).toBe(RUNS * PER_RUN);
    // The runs did share calls: some delivered call holds the emails of more than one run.
    const perKey = new Map<string, Set<string>>();
    for (const e of emails) perKey.set(e.idempotencyKey!, (perKey.get(e.idempotencyKey!) ?? new Set()).add(e.to[0].split("-")[0]));
    expect([...perKey.entries()].some(([key, runs]) => key.startsWith("shared:") && runs.size > 1)).toBe(true);
    // Each held (shared) call was sent again after the restart under its own key and answered from the provider's cache.
    const calls = resend.requests.filter((r) => r.path === "/emails/batch" && r.status === 200);
    const heldKeys = [...new Set(calls.filter((r) => r.headers["idempotency-key"].startsWith("shared:")).slice(1, 1 + heldCalls).map((r) => r.headers["idempotency-key"]))];
    for (const key of heldKeys) expect(calls.filter((r) => r.headers["idempotency-key"] === key).length).toBeGreaterThanOrEqual(2);
    // At least one of them was a shared call: the restart sent again a call that held other runs' emails too.
    expect(heldKeys.some((key) => key.startsWith("shared:"))).toBe(true);
    console.log(
      `kill-shared: calls=${calls.length} held=${heldCalls} (shared ${heldKeys.filter((k) => k.startsWith("shared:")).length}) ` +
        `deliveredBeforeRestart=${deliveredBeforeRestart} delivered=${emails.length} distinct=${new Set(emails.map((e) => e.to[0])).size} sharedKeys=${[...perKey.keys()].filter((k) => k.startsWith("shared:")).length}`,
    );
  });
});
