/**
 * Fault: two instances on one PostgreSQL both run the background work of a server (test/faults/server-worker.ts). The
 * one that claimed a run with a 2,000-item AI node is killed with SIGKILL in the middle of it; the other takes the run
 * over at its next sweep and finishes it. The fake model answers the first 600 requests, then holds every further one
 * unanswered (the calls in flight at the kill), so which items were answered is known. The run SUCCEEDS and no item
 * is asked twice: only the calls left unanswered by the kill are asked again, each answered once (the fake counts its
 * answers per prompt). The dead instance's in-flight slots are leased for a short time that only a live process
 * renews, so the survivor is not held up by them for the length of a call timeout. Prints the figures.
 * PostgreSQL only: the embedded PGlite admits one process.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { startFakeOpenAI, type FakeOpenAI } from "@/test/support/fake-openai";
import { enqueue, insertUpload, insertWorkflow } from "@/test/runs/helpers";
import { accountWithAi, peopleRows, perRowGraph } from "@/test/ai/helpers";
import { waitFor } from "./gate";
import { aiItemLedger, answerThenHold } from "./mid-ai";
import { loadAverage, runRow, serverProcessFixture } from "./server-fixture";

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
const ITEMS = 2000;
const ANSWERED_BEFORE_KILL = 600;

const fixture = serverProcessFixture({});
let ai: FakeOpenAI;

beforeAll(async () => {
  ai = await startFakeOpenAI();
});
afterAll(async () => {
  ai.hangNext(0);
  await ai.close();
});

describe.runIf(onPostgres)("two instances, the one asking the model killed mid-AI", () => {
  it(`the other takes the run over; SUCCESS with each of ${ITEMS} items answered once`, async () => {
    const { id, token } = await accountWithAi(ai.url);
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(ITEMS));
    const workflowId = await insertWorkflow(id, perRowGraph(uploadId));
    const model = answerThenHold(ai, ANSWERED_BEFORE_KILL);

    const instances = [fixture.start(), fixture.start()];
    const keys = await Promise.all(instances.map(async (p) => (await p.ready).key));
    expect(keys[0]).not.toBe(keys[1]);
    const res = await enqueue(token, workflowId);
    expect(res.status).toBe(202);
    const runId = res.body.runId as string;

    const askedBeforeKill = await model.killPoint();
    const owner = (await runRow(runId)).executor_key;
    const ownerIndex = keys.indexOf(owner);
    expect(ownerIndex).toBeGreaterThanOrEqual(0);
    instances[ownerIndex].child.kill("SIGKILL");
    const killedAt = Date.now();
    expect(await instances[ownerIndex].exited).toBe("SIGKILL");
    const inFlightAtKill = askedBeforeKill - ANSWERED_BEFORE_KILL;
    model.release();

    const survivor = keys[1 - ownerIndex];
    await waitFor("the survivor to take the run over", async () => (await runRow(runId)).executor_key === survivor, 30_000);
    const takenOverAt = Date.now();
    await waitFor("the first answer after the takeover", () => model.answers() > ANSWERED_BEFORE_KILL, 60_000);
    const resumedAt = Date.now();
    await waitFor("the run to finish", async () => (await runRow(runId)).status !== "RUNNING", 150_000);
    expect((await runRow(runId)).status).toBe("SUCCESS");

    expect(await aiItemLedger(await getDb(), runId)).toEqual({ done: ITEMS, total: ITEMS });
    // Every item was answered exactly once; only the calls the kill left unanswered were asked again.
    expect(model.answeredPerItem.size).toBe(ITEMS);
    expect([...model.answeredPerItem.values()].every((n) => n === 1)).toBe(true);
    expect(ai.requests.length - ITEMS).toBe(inFlightAtKill);
    expect(inFlightAtKill).toBeLessThanOrEqual(8);
    const delivered = fixture.resend.emails().map((e) => e.to[0]);
    expect(delivered).toHaveLength(ITEMS);
    expect(new Set(delivered).size).toBe(ITEMS);
    instances[1 - ownerIndex].child.kill("SIGTERM");
    await instances[1 - ownerIndex].exited;

    console.log(`takeover-mid-ai (loadavg ${loadAverage()}):`);
    console.table({
      "answered before the kill": ANSWERED_BEFORE_KILL,
      "in flight at the kill (asked again)": inFlightAtKill,
      "taken over after the kill (ms)": takenOverAt - killedAt,
      "first answer after the kill (ms)": resumedAt - killedAt,
    });
  });
});
