/**
 * Recovery in seconds (CONTRACT 12), on PostgreSQL with real server processes (test/faults/server-worker.ts: the
 * background work of `next start`, started the same way):
 *  1. kill -9 of the process mid-OUTPUT of 5,000 emails, restart: the new process resumes the run within 5 s of being
 *     ready (its predecessor's advisory-lock session died with it), SUCCESS, exactly 5,000 distinct emails.
 *  2. SIGTERM mid-run: the run is handed back at its next batch boundary (RUNNING, released), the process exits, and
 *     the restarted process resumes it within 5 s of being ready; exactly once again.
 * Prints the figures. PostgreSQL only: the embedded PGlite admits one process, and its restart resumes every RUNNING
 * run at once by construction (test/faults/kill-mid-output.test.ts covers that path).
 */
import { describe, expect, it } from "vitest";
import { createTestAccount } from "@/test/support/accounts";
import { emailEveryRowWorkflow, enqueue } from "@/test/runs/helpers";
import { waitFor } from "./gate";
import { loadAverage, runRow, serverProcessFixture } from "./server-fixture";

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
const EMAILS = 5000;

const fixture = serverProcessFixture({ EMAIL_RATE_PER_SECOND: "10" });
const server = () => fixture.start();

/** Every address delivered exactly once, all of them. */
function expectExactlyOnce(addresses: string[]) {
  const delivered = fixture.resend.emails().map((e) => e.to[0]);
  const wanted = new Set(addresses);
  const mine = delivered.filter((to) => wanted.has(to));
  expect(mine).toHaveLength(addresses.length);
  expect(new Set(mine).size).toBe(addresses.length);
}

/** Epoch ms of the first email delivered after `count` were (polling the fake provider: an awaited event). */
async function firstEmailAfter(count: number): Promise<number> {
  await waitFor("the run to resume", () => fixture.resend.emails().length > count, 30_000);
  return Date.now();
}

describe.runIf(onPostgres)("recovery after kill -9 and after SIGTERM", () => {
  it("resumes within 5 s of the new process being ready, exactly once", async () => {
    const { id, token } = await createTestAccount();
    const killed = await emailEveryRowWorkflow(id, EMAILS, "kill");
    const termed = await emailEveryRowWorkflow(id, 3000, "term");

    // 1. kill -9 mid-OUTPUT: 10 batches go through, the next ones are held, then the process dies.
    fixture.gate.holdAfter(10);
    const first = server();
    await first.ready;
    const runId = (await enqueue(token, killed.workflowId)).body.runId as string;
    await fixture.gate.waitForHeld(1, 30_000);
    await waitFor("the forwarded batches", () => fixture.resend.emails().length >= 1000);
    first.child.kill("SIGKILL");
    expect(await first.exited).toBe("SIGKILL");
    await fixture.gate.release(); // the provider got them; the dead process never recorded it: the worst case for duplicates
    const beforeRestart = fixture.resend.emails().length;
    expect((await runRow(runId)).status).toBe("RUNNING");

    const second = server();
    const { at: readyAt } = await second.ready;
    const resumedAt = await firstEmailAfter(beforeRestart);
    await waitFor("the killed run to finish", async () => (await runRow(runId)).status !== "RUNNING", 40_000);
    expect((await runRow(runId)).status).toBe("SUCCESS");
    expectExactlyOnce(killed.addresses);

    // 2. SIGTERM mid-run: handed back at the next batch boundary, resumed by the next process.
    const sentBefore = fixture.resend.emails().length;
    const termRun = (await enqueue(token, termed.workflowId)).body.runId as string;
    await waitFor("the second run to send", () => fixture.resend.emails().length >= sentBefore + 500, 30_000);
    const signalledAt = Date.now();
    second.child.kill("SIGTERM");
    const exitCode = await second.exited;
    const exitMs = Date.now() - signalledAt;
    const handedBack = await runRow(termRun);
    expect(handedBack).toMatchObject({ status: "RUNNING", executor_key: null, heartbeat_at: null });
    const beforeThird = fixture.resend.emails().length;
    expect(beforeThird - sentBefore).toBeLessThan(3000);

    const third = server();
    const { at: thirdReady } = await third.ready;
    const termResumedAt = await firstEmailAfter(beforeThird);
    await waitFor("the handed-back run to finish", async () => (await runRow(termRun)).status !== "RUNNING", 40_000);
    expect((await runRow(termRun)).status).toBe("SUCCESS");
    expectExactlyOnce(termed.addresses);
    third.child.kill("SIGTERM");
    await third.exited;

    const figures = {
      "kill -9: resumed after ready (ms)": resumedAt - readyAt,
      "kill -9: emails before the kill": beforeRestart,
      "SIGTERM: exit after signal (ms)": exitMs,
      "SIGTERM: exit code": exitCode,
      "SIGTERM: resumed after ready (ms)": termResumedAt - thirdReady,
      "SIGTERM: emails before the signal": beforeThird - sentBefore,
    };
    console.log(`recovery-restart (loadavg ${loadAverage()}):`);
    console.table(figures);
    expect(resumedAt - readyAt).toBeLessThanOrEqual(5000);
    expect(termResumedAt - thirdReady).toBeLessThanOrEqual(5000);
  });
});
