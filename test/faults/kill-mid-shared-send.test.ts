/**
 * Fault: the executor process is killed with SIGKILL while many small runs send their emails in shared provider calls
 * (lib/nodes/output/shared-send.ts), and a fresh process takes over. As in kill-mid-output.test.ts, a gate in front of
 * the fake Resend forwards the first calls and holds the next ones; once a call is held the worker is killed, then the
 * held calls are delivered anyway (the provider accepted them, but the dead worker never recorded it) — the worst case
 * for duplicates: the restarted process must send each of those calls again under its own key, never a run's emails
 * alone. 40 runs of 40 workflows, 2 emails each, 32 runs at once.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execRows, getDbHandle, openPglite, setDbHandle } from "@/db/client";
import { resetConfig } from "@/lib/config";
import { createTestAccount } from "@/test/support/accounts";
import { startFakeResend, type FakeResend } from "@/test/support/fake-resend";
import { emailEveryRowGraph, enqueue, insertUpload, insertWorkflow } from "@/test/runs/helpers";
import { startGate, waitFor, type Gate } from "./gate";

const RUNS = 40;
const PER_RUN = 2;
const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

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

function startWorker(env: Record<string, string>): { child: ChildProcess; exited: Promise<number | string> } {
  const child = spawn(process.execPath, ["--conditions=react-server", "--import", "tsx", "test/faults/worker.ts"], {
    cwd: process.cwd(),
    env: {
      ...process.env,
      ...env,
      LOG_LEVEL: "error",
      RESEND_API_KEY: "re_test",
      RESEND_BASE_URL: gate.url,
      EMAIL_DAILY_QUOTA: "1000000",
      EMAIL_RATE_PER_SECOND: "1000",
      EXECUTOR_CONCURRENCY: "32",
      FAULT_EXECUTOR_CONCURRENCY: "32",
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const exited = new Promise<number | string>((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
  return { child, exited };
}

function withTimeout<T>(what: string, promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms).unref())]);
}

describe("kill -9 of the executor process while small runs share provider calls", () => {
  it(`restarts and ends with ${RUNS} runs SUCCESS and each of their ${RUNS * PER_RUN} emails delivered once`, async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "flowmail-fault-shared-"));
    const original = await getDbHandle();
    const fileDb = onPostgres ? undefined : await openPglite(path.join(dataDir, "pglite"));
    if (fileDb) setDbHandle(fileDb);
    process.env.EMAIL_DAILY_QUOTA = "1000000";
    resetConfig();
    const { id, token } = await createTestAccount();
    const runIds: string[] = [];
    for (let w = 0; w < RUNS; w++) {
      const uploadId = await insertUpload(id, ["email"], Array.from({ length: PER_RUN }, (_, i) => [`s${w}-${i}@example.com`]));
      const workflowId = await insertWorkflow(id, emailEveryRowGraph(uploadId));
      const res = await enqueue(token, workflowId);
      expect(res.status).toBe(202);
      runIds.push(res.body.runId as string);
    }
    if (fileDb) {
      await fileDb.close();
      setDbHandle(original);
    }
    const workerEnv: Record<string, string> = onPostgres ? { DATABASE_URL: process.env.TEST_DATABASE_CURRENT_URL! } : { DATA_DIR: dataDir };

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

    const checkDb = onPostgres ? original : await openPglite(path.join(dataDir, "pglite"));
    try {
      const runs = await execRows<{ status: string; n: number }>(checkDb.db, sql`select status, count(*)::int as n from runs where id in ${sql.raw(`('${runIds.join("','")}')`)} group by status`);
      expect(runs.map((r) => [r.status, Number(r.n)])).toEqual([["SUCCESS", RUNS]]);
      const rows = await execRows<{ status: string; n: number }>(checkDb.db, sql`select status, count(*)::int as n from email_sends where run_id in ${sql.raw(`('${runIds.join("','")}')`)} group by status`);
      expect(rows.map((r) => [r.status, Number(r.n)])).toEqual([["sent", RUNS * PER_RUN]]);
    } finally {
      if (!onPostgres) await checkDb.close();
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
