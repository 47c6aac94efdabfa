/**
 * Two instances on one PostgreSQL (CONTRACT 12, "Recovery"): both run the background work of a server
 * (test/faults/server-worker.ts). The one that claimed a 5,000-email run is killed with SIGKILL mid-OUTPUT; the other
 * notices that the dead process's advisory-lock session is gone at its next sweep and finishes the run: taken over
 * within 15 s of the kill (the sweep runs every 5 s), SUCCESS, exactly 5,000 distinct emails. Prints the figures.
 * PostgreSQL only: the embedded PGlite admits one process.
 */
import { sql } from "drizzle-orm";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execRows, getDb } from "@/db/client";
import { createTestAccount } from "@/test/support/accounts";
import { startFakeResend, type FakeResend } from "@/test/support/fake-resend";
import { emailEveryRowWorkflow, enqueue } from "@/test/runs/helpers";
import { startGate, waitFor, type Gate } from "./gate";
import { startServerProcess, type ServerProcess } from "./server-process";

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
const EMAILS = 5000;

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

async function runRow(runId: string) {
  const [row] = await execRows<{ status: string; executor_key: number | null }>(
    await getDb(),
    sql`select status, executor_key from runs where id = ${runId}`,
  );
  return row;
}

describe.runIf(onPostgres)("two instances, the sending one killed", () => {
  it("the other takes the run over within 15 s of the kill and sends every email exactly once", async () => {
    const { id, token } = await createTestAccount();
    const { workflowId, addresses } = await emailEveryRowWorkflow(id, EMAILS, "takeover");
    const instances = [startServerProcess(gate.url, { EMAIL_RATE_PER_SECOND: "10" }), startServerProcess(gate.url, { EMAIL_RATE_PER_SECOND: "10" })];
    processes.push(...instances);
    const keys = await Promise.all(instances.map(async (p) => (await p.ready).key));
    expect(keys[0]).not.toBe(keys[1]);

    gate.holdAfter(10);
    const runId = (await enqueue(token, workflowId)).body.runId as string;
    await gate.waitForHeld(1, 30_000);
    await waitFor("the forwarded batches", () => resend.emails().length >= 1000);
    const owner = (await runRow(runId)).executor_key;
    const senderIndex = keys.indexOf(owner);
    expect(senderIndex).toBeGreaterThanOrEqual(0);
    const sender = instances[senderIndex];
    const survivor = instances[1 - senderIndex];

    sender.child.kill("SIGKILL");
    const killedAt = Date.now();
    expect(await sender.exited).toBe("SIGKILL");
    await gate.release();
    const beforeTakeover = resend.emails().length;

    await waitFor("the survivor to take the run over", async () => (await runRow(runId)).executor_key === keys[1 - senderIndex], 30_000);
    const takenOverAt = Date.now();
    await waitFor("the first email after the takeover", () => resend.emails().length > beforeTakeover, 30_000);
    const resumedAt = Date.now();
    await waitFor("the run to finish", async () => (await runRow(runId)).status !== "RUNNING", 40_000);
    expect((await runRow(runId)).status).toBe("SUCCESS");

    const delivered = resend.emails().map((e) => e.to[0]);
    expect(delivered).toHaveLength(EMAILS);
    expect(new Set(delivered)).toEqual(new Set(addresses));
    survivor.child.kill("SIGTERM");
    await survivor.exited;

    console.log(`recovery-takeover (loadavg ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}):`);
    console.table({
      "taken over after the kill (ms)": takenOverAt - killedAt,
      "first email after the kill (ms)": resumedAt - killedAt,
      "emails before the kill": beforeTakeover,
    });
    expect(takenOverAt - killedAt).toBeLessThanOrEqual(15_000);
  });
});
