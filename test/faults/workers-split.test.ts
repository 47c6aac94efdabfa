/**
 * Web and worker processes on one PostgreSQL: the test process is the web process with EXECUTOR=off (its route
 * handlers enqueue and NOTIFY the workers; it executes nothing), and two worker processes (`worker/index.ts`, as
 * `npm run worker` starts it) execute 20 workflows × 50 runs, each run one email. Worker A's provider calls pass a
 * gate that holds its 21st call; A is then killed with SIGKILL mid-send and its held call delivered anyway (the provider
 * accepted it, A never recorded it). Worker B takes over A's runs; every run ends SUCCESS, each workflow's runs ran
 * strictly one after another in enqueue order, and each run's email was delivered exactly once.
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execRows, getDb } from "@/db/client";
import { resetConfig } from "@/lib/config";
import { getEmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { createTestAccount } from "@/test/support/accounts";
import { startFakeResend, type FakeResend } from "@/test/support/fake-resend";
import { emailEveryRowWorkflow, enqueue } from "@/test/runs/helpers";
import { startGate, waitFor, type Gate } from "./gate";
import { loadAverage } from "./server-fixture";
import { startWorkerProcess, type WorkerProcess } from "./worker-process";

const WORKFLOWS = 20;
const RUNS_PER_WORKFLOW = 50;
const TOTAL = WORKFLOWS * RUNS_PER_WORKFLOW;
/** Worker A's provider calls forwarded before the gate holds the next one. */
const FORWARDED_BEFORE_KILL = 20;

let resend: FakeResend;
let gateA: Gate;
let gateB: Gate;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  resend = await startFakeResend();
  gateA = await startGate(resend.url);
  gateB = await startGate(resend.url);
});

afterAll(async () => {
  for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGKILL");
  await gateA.close();
  await gateB.close();
  await resend.close();
});

describe("one web process with EXECUTOR=off and two workers on one PostgreSQL", () => {
  it(`executes ${WORKFLOWS} workflows × ${RUNS_PER_WORKFLOW} runs in FIFO order per workflow, exactly once, through a worker's kill -9`, async () => {
    // TEST_DATABASE_CURRENT_URL: the workers reach this file's PostgreSQL database by its address.
    const url = process.env.TEST_DATABASE_CURRENT_URL!;
    expect(url).toMatch(/^postgres/);
    // This process is the web process: EXECUTOR=off on PostgreSQL, so its enqueues NOTIFY the workers.
    Object.assign(process.env, { DATABASE_URL: url, EXECUTOR: "off", RUN_RATE_LIMIT_PER_MINUTE: "1000000" });
    resetConfig();
    expect(getEmbeddedExecutor()).toBeUndefined();
    const { id, token } = await createTestAccount();
    const workflowIds: string[] = [];
    for (let w = 0; w < WORKFLOWS; w++) workflowIds.push((await emailEveryRowWorkflow(id, 1, `split-${w}-`)).workflowId);

    let callsA = 0;
    let callsB = 0;
    gateA.holdAfter(FORWARDED_BEFORE_KILL, () => ++callsA > 0);
    gateB.holdAfter(0, () => (++callsB, false));
    const env = (gate: Gate) => ({ RESEND_API_KEY: "re_test", RESEND_BASE_URL: gate.url, EMAIL_RATE_PER_SECOND: "1000", EXECUTOR_CONCURRENCY: "8" });
    const a = startWorkerProcess(env(gateA));
    const b = startWorkerProcess(env(gateB));
    workers.push(a, b);
    await Promise.all([a.started, b.started]);

    // Enqueued while the workers run: each workflow's runs in order, the workflows side by side.
    const started = Date.now();
    const runIds = new Map<string, string[]>();
    await Promise.all(
      workflowIds.map(async (workflowId) => {
        const ids: string[] = [];
        for (let r = 0; r < RUNS_PER_WORKFLOW; r++) {
          const res = await enqueue(token, workflowId);
          expect(res.status, res.text).toBe(202);
          ids.push(res.body.runId as string);
        }
        runIds.set(workflowId, ids);
      }),
    );

    await gateA.waitForHeld(1, 180_000);
    const keyA = await executorKeyOf(a);
    const killedAt = Date.now();
    a.child.kill("SIGKILL");
    expect(await a.exited).toBe("SIGKILL");
    const held = gateA.held();
    await gateA.release(); // delivered although the dead worker never recorded it
    const db = await getDb();
    const [orphans] = await execRows<{ n: number }>(db, sql`select count(*)::int as n from runs where status = 'RUNNING' and executor_key = ${keyA}`);
    // Taken over: no run is left RUNNING under the dead worker's key.
    await waitFor("worker B to take over the dead worker's runs", async () => {
      const [row] = await execRows<{ n: number }>(db, sql`select count(*)::int as n from runs where status = 'RUNNING' and executor_key = ${keyA}`);
      return Number(row.n) === 0;
    }, 60_000);
    const takeoverMs = Date.now() - killedAt;

    await waitFor("every run to finish", async () => {
      const [row] = await execRows<{ n: number }>(db, sql`select count(*)::int as n from runs where status in ('SUCCESS', 'FAILED')`);
      return Number(row.n) === TOTAL;
    }, 300_000);
    const elapsedMs = Date.now() - started;

    const statuses = await execRows<{ status: string; n: number }>(db, sql`select status, count(*)::int as n from runs group by status`);
    expect(statuses.map((r) => [r.status, Number(r.n)])).toEqual([["SUCCESS", TOTAL]]);
    const sends = await execRows<{ status: string; n: number; runs: number }>(db, sql`select status, count(*)::int as n, count(distinct run_id)::int as runs from email_sends group by status`);
    expect(sends.map((r) => [r.status, Number(r.n), Number(r.runs)])).toEqual([["sent", TOTAL, TOTAL]]);
    // Strict FIFO per workflow: in enqueue order, each run started only after the one before it had finished.
    for (const workflowId of workflowIds) {
      const rows = await execRows<{ id: string; started: string; completed: string }>(
        db,
        sql`select id, started_at::text as started, completed_at::text as completed from runs where workflow_id = ${workflowId} order by seq`,
      );
      expect(rows.map((r) => r.id)).toEqual(runIds.get(workflowId));
      for (let k = 1; k < rows.length; k++) expect(Date.parse(rows[k].started) >= Date.parse(rows[k - 1].completed), `${workflowId} run ${k}`).toBe(true);
    }
    // Exactly once at the provider: each workflow's address got one email per run, none lost, none twice.
    const perAddress = new Map<string, number>();
    for (const e of resend.emails()) perAddress.set(e.to[0], (perAddress.get(e.to[0]) ?? 0) + 1);
    expect(perAddress.size).toBe(WORKFLOWS);
    expect([...perAddress.values()].every((n) => n === RUNS_PER_WORKFLOW)).toBe(true);
    expect(callsA).toBeGreaterThan(FORWARDED_BEFORE_KILL);
    expect(callsB).toBeGreaterThan(0);
    expect(takeoverMs).toBeLessThanOrEqual(15_000);

    b.child.kill("SIGTERM");
    expect(await b.exited).toBe(143);
    console.log(
      `workers-split: runs=${TOTAL} elapsed=${elapsedMs} ms calls A=${callsA} (held ${held}) B=${callsB} ` +
        `A's runs RUNNING at the kill=${orphans.n} takeover=${takeoverMs} ms delivered=${resend.emails().length} loadavg ${loadAverage()}`,
    );
  });
});

/** The executor key a worker logged at its start. */
async function executorKeyOf(worker: WorkerProcess): Promise<number> {
  const line = worker.lines.find((l) => l.msg === "worker started");
  expect(typeof line?.executorKey).toBe("number");
  return line!.executorKey as number;
}
