/**
 * Fault: the executor process is killed with SIGKILL in the middle of an AI node asking a model for each of 2,000
 * items, and a fresh process takes over. The fake model answers the first 600 requests and then holds every further
 * one unanswered (the calls in flight when the process dies); once the worker has had time to record the 600 answers
 * it is killed. The restarted process must finish the run without asking again for any answered item: the fake counts
 * its answers per item. Only the calls that were in flight, unanswered, are asked twice (at most maxConcurrency).
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execRows, type Db } from "@/db/client";
import { startFakeOpenAI, type FakeOpenAI } from "@/test/support/fake-openai";
import { startFakeResend, type FakeResend } from "@/test/support/fake-resend";
import { enqueue, insertUpload, insertWorkflow } from "@/test/runs/helpers";
import { accountWithAi, peopleRows, perRowGraph } from "@/test/ai/helpers";
import { inWorkerDatabase, startExecutorWorker, withTimeout } from "./executor-worker";
import { aiItemLedger, answerThenHold } from "./mid-ai";

const ITEMS = 2000;
const ANSWERED_BEFORE_KILL = 600;

let resend: FakeResend;
let ai: FakeOpenAI;

beforeAll(async () => {
  resend = await startFakeResend();
  ai = await startFakeOpenAI();
});

afterAll(async () => {
  ai.hangNext(0);
  await ai.close();
  await resend.close();
});

async function enqueueBigAiRun(): Promise<string> {
  const { id, token } = await accountWithAi(ai.url);
  const uploadId = await insertUpload(id, ["name", "email"], peopleRows(ITEMS), 1000);
  const res = await enqueue(token, await insertWorkflow(id, perRowGraph(uploadId)));
  expect(res.status).toBe(202);
  return res.body.runId as string;
}

async function ledgerState(db: Db, runId: string) {
  const [run] = await execRows<{ status: string }>(db, sql`select status from runs where id = ${runId}`);
  return { status: run.status, ...(await aiItemLedger(db, runId)) };
}

describe("kill -9 of the executor process mid-AI", () => {
  it(`restarts and ends SUCCESS with each of ${ITEMS} items answered once`, async () => {
    const { value: runId, workerEnv, openForCheck } = await inWorkerDatabase("flowmail-fault-ai-", enqueueBigAiRun);
    const model = answerThenHold(ai, ANSWERED_BEFORE_KILL);

    const doomed = startExecutorWorker(resend.url, workerEnv);
    const askedBeforeKill = await model.killPoint(doomed.exited);
    doomed.child.kill("SIGKILL");
    expect(await doomed.exited).toBe("SIGKILL");
    const inFlightAtKill = askedBeforeKill - ANSWERED_BEFORE_KILL;
    model.release();

    const restarted = startExecutorWorker(resend.url, workerEnv);
    expect(await withTimeout("the restarted worker to finish", restarted.exited, 200_000)).toBe(0);

    const checkDb = await openForCheck();
    try {
      expect(await ledgerState(checkDb.db, runId)).toEqual({ status: "SUCCESS", done: ITEMS, total: ITEMS });
    } finally {
      await checkDb.close();
    }
    // Every item was answered exactly once: none of the 600 answered before the kill was asked again.
    expect(model.answeredPerItem.size).toBe(ITEMS);
    expect([...model.answeredPerItem.values()].every((n) => n === 1)).toBe(true);
    const askedTwice = ai.requests.length - ITEMS;
    expect(askedTwice).toBe(inFlightAtKill);
    expect(inFlightAtKill).toBeLessThanOrEqual(8);
    expect(resend.emails()).toHaveLength(ITEMS);
    console.log(`kill-mid-ai: ${ANSWERED_BEFORE_KILL} answered before the kill, ${inFlightAtKill} in flight (asked again after the restart)`);
  });
});
