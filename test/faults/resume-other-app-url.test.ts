/**
 * A large batch resumed by an instance with other settings. Two server processes (test/faults/server-worker.ts) on
 * one PostgreSQL with different APP_URL (so their List-Unsubscribe links differ) and EMAIL_FROM: the first claims a
 * 2,000-email run and is killed with SIGKILL while batches are held in front of the fake Resend; the held batches are
 * then delivered anyway (accepted by the provider, never recorded). The second instance takes the run over and sends
 * the unrecorded batches again under the same idempotency keys: they must be byte for byte the first ones (built with
 * the run's APP_URL and sender, not the resuming instance's), so Resend answers them from its idempotency record
 * instead of 409. The run SUCCEEDS with every email delivered exactly once. PostgreSQL only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestAccount } from "@/test/support/accounts";
import { startFakeResend, type FakeResend } from "@/test/support/fake-resend";
import { emailEveryRowWorkflow, enqueue } from "@/test/runs/helpers";
import { startGate, waitFor, type Gate } from "./gate";
import { loadAverage, runRow } from "./server-fixture";
import { startServerProcess, type ServerProcess } from "./server-process";

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
const EMAILS = 2000;

let resend: FakeResend;
let gate: Gate;
const processes: ServerProcess[] = [];

beforeAll(async () => {
  resend = await startFakeResend();
  gate = await startGate(resend.url);
});

afterAll(async () => {
  for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
  await gate.close();
  await resend.close();
});

function instance(appUrl: string, from: string): ServerProcess {
  const p = startServerProcess(gate.url, { APP_URL: appUrl, EMAIL_FROM: from, EMAIL_RATE_PER_SECOND: "20" });
  processes.push(p);
  return p;
}

describe.runIf(onPostgres)("a run resumed by an instance with another APP_URL and EMAIL_FROM", () => {
  it("sends the recorded bytes again: SUCCESS, every email exactly once", async () => {
    const { id, token } = await createTestAccount();
    const { workflowId, addresses } = await emailEveryRowWorkflow(id, EMAILS, "other-url-");
    const first = instance("https://first.flowmail.test", "Flowmail <first@flowmail.test>");
    await first.ready;
    gate.holdAfter(5);
    const runId = (await enqueue(token, workflowId)).body.runId as string;
    await gate.waitForHeld(1, 60_000);
    await waitFor("the forwarded batches", () => resend.emails().length >= 500, 30_000);
    first.child.kill("SIGKILL");
    expect(await first.exited).toBe("SIGKILL");
    const held = gate.held();
    await gate.release(); // delivered, but the dead instance never recorded it: the resume sends these again
    const beforeResume = resend.emails().length;
    expect(beforeResume).toBe(500 + held * 100);

    const second = instance("https://second.flowmail.test", "Flowmail <second@flowmail.test>");
    await second.ready;
    await waitFor("the run to finish", async () => (await runRow(runId)).status !== "RUNNING", 120_000);
    const conflicts = resend.requests.filter((r) => r.status === 409).length;
    console.log(`resume with another APP_URL (loadavg ${loadAverage()}): ${held} batches held at the kill; 409 answers: ${conflicts}`);
    expect((await runRow(runId)).status).toBe("SUCCESS");
    expect(conflicts).toBe(0);

    const delivered = resend.emails();
    expect(delivered).toHaveLength(EMAILS);
    expect(new Set(delivered.map((e) => e.to[0]))).toEqual(new Set(addresses));
    // Every email, whichever instance sent it, was built with the run's settings: the first instance's.
    expect(delivered.every((e) => e.from === "Flowmail <first@flowmail.test>")).toBe(true);
    expect(delivered.every((e) => e.headers?.["List-Unsubscribe"]?.startsWith("<https://first.flowmail.test/api/unsubscribe/"))).toBe(true);
    // The held batches really went to the provider twice (once from each instance), answered once.
    const batchCalls = resend.requests.filter((r) => r.path === "/emails/batch" && r.status === 200);
    expect(batchCalls.length).toBeGreaterThanOrEqual(EMAILS / 100 + held);
    second.child.kill("SIGTERM");
    await second.exited;
  });
});
