/**
 * Two instances on one PostgreSQL (CONTRACT 12, "Recovery"): both run the background work of a server
 * (test/faults/server-worker.ts). The one that claimed a 5,000-email run is killed with SIGKILL mid-OUTPUT; the other
 * notices that the dead process's advisory-lock session is gone at its next sweep and finishes the run: taken over
 * within 15 s of the kill (the sweep runs every 5 s), SUCCESS, exactly 5,000 distinct emails. Prints the figures.
 * PostgreSQL only: the embedded PGlite admits one process.
 */
import { describe, expect, it } from "vitest";
import { createTestAccount } from "@/test/support/accounts";
import { emailEveryRowWorkflow, enqueue } from "@/test/runs/helpers";
import { waitFor } from "./gate";
import { loadAverage, runRow, serverProcessFixture } from "./server-fixture";

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
const EMAILS = 5000;

const fixture = serverProcessFixture({ EMAIL_RATE_PER_SECOND: "10" });

describe.runIf(onPostgres)("two instances, the sending one killed", () => {
  it("the other takes the run over within 15 s of the kill and sends every email exactly once", async () => {
    const { id, token } = await createTestAccount();
    const { workflowId, addresses } = await emailEveryRowWorkflow(id, EMAILS, "takeover");
    const instances = [fixture.start(), fixture.start()];
    const keys = await Promise.all(instances.map(async (p) => (await p.ready).key));
    expect(keys[0]).not.toBe(keys[1]);

    fixture.gate.holdAfter(10);
    const runId = (await enqueue(token, workflowId)).body.runId as string;
    await fixture.gate.waitForHeld(1, 30_000);
    await waitFor("the forwarded batches", () => fixture.resend.emails().length >= 1000);
    const owner = (await runRow(runId)).executor_key;
    const senderIndex = keys.indexOf(owner);
    expect(senderIndex).toBeGreaterThanOrEqual(0);
    const sender = instances[senderIndex];
    const survivor = instances[1 - senderIndex];

    sender.child.kill("SIGKILL");
    const killedAt = Date.now();
    expect(await sender.exited).toBe("SIGKILL");
    await fixture.gate.release();
    const beforeTakeover = fixture.resend.emails().length;

    await waitFor("the survivor to take the run over", async () => (await runRow(runId)).executor_key === keys[1 - senderIndex], 30_000);
    const takenOverAt = Date.now();
    await waitFor("the first email after the takeover", () => fixture.resend.emails().length > beforeTakeover, 30_000);
    const resumedAt = Date.now();
    await waitFor("the run to finish", async () => (await runRow(runId)).status !== "RUNNING", 40_000);
    expect((await runRow(runId)).status).toBe("SUCCESS");

    const delivered = fixture.resend.emails().map((e) => e.to[0]);
    expect(delivered).toHaveLength(EMAILS);
    expect(new Set(delivered)).toEqual(new Set(addresses));
    survivor.child.kill("SIGTERM");
    await survivor.exited;

    console.log(`recovery-takeover (loadavg ${loadAverage()}):`);
    console.table({
      "taken over after the kill (ms)": takenOverAt - killedAt,
      "first email after the kill (ms)": resumedAt - killedAt,
      "emails before the kill": beforeTakeover,
    });
    expect(takenOverAt - killedAt).toBeLessThanOrEqual(15_000);
  });
});
