/**
 * Fault: the executor process is killed with SIGKILL in the middle of an AI node asking a model for each of 2,000
 * items, and a fresh process takes over. The fake model answers the first 600 requests and then holds every further
 * one unanswered (the calls in flight when the process dies); once the worker has had time to record the 600 answers
 * it is killed. The restarted process must finish the run without asking again for any answered item: the fake counts
 * its answers per item. Only the calls that were in flight, unanswered, are asked twice (at most maxConcurrency).
 */
import { sql } from "drizzle-orm";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execRows, getDb, type Db } from "@/db/client";
import { accounts } from "@/db/schema";
import { encryptSecret } from "@/lib/crypto";
import { createTestAccount } from "@/test/support/accounts";
import { startFakeOpenAI, prompt, type FakeOpenAI } from "@/test/support/fake-openai";
import { startFakeResend, type FakeResend } from "@/test/support/fake-resend";
import { enqueue, insertUpload, insertWorkflow } from "@/test/runs/helpers";
import { itemOf, peopleRows, perRowGraph } from "@/test/ai/helpers";
import { inWorkerDatabase, startExecutorWorker, withTimeout } from "./executor-worker";
import { waitFor } from "./gate";

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
  const { id, token } = await createTestAccount();
  const key = "sk-fault-1234";
  await (await getDb())
    .update(accounts)
    .set({ aiProvider: "openai-compatible", aiModel: "fake-model", aiBaseUrl: ai.url, aiKeyEncrypted: encryptSecret(key), aiKeyLast4: "1234" })
    .where(eq(accounts.id, id));
  const uploadId = await insertUpload(id, ["name", "email"], peopleRows(ITEMS), 1000);
  const res = await enqueue(token, await insertWorkflow(id, perRowGraph(uploadId)));
  expect(res.status).toBe(202);
  return res.body.runId as string;
}

async function ledgerState(db: Db, runId: string) {
  const [run] = await execRows<{ status: string }>(db, sql`select status from runs where id = ${runId}`);
  const [items] = await execRows<{ done: number; total: number }>(
    db,
    sql`select count(*) filter (where status = 'done')::int as done, count(*)::int as total from ai_items where run_id = ${runId}`,
  );
  return { status: run.status, done: Number(items.done), total: Number(items.total) };
}

describe("kill -9 of the executor process mid-AI", () => {
  it(`restarts and ends SUCCESS with each of ${ITEMS} items answered once`, async () => {
    const { value: runId, workerEnv, openForCheck } = await inWorkerDatabase("flowmail-fault-ai-", enqueueBigAiRun);
    const answered = new Map<string, number>();
    let answers = 0;
    ai.answer((req) => {
      const name = itemOf(prompt(req));
      answered.set(name, (answered.get(name) ?? 0) + 1);
      if (++answers === ANSWERED_BEFORE_KILL) ai.hangNext(1_000_000); // every later request stays in flight
      return { greeting: `Hi ${name}` };
    });

    const doomed = startExecutorWorker(resend.url, workerEnv);
    await withTimeout(
      "600 answers",
      Promise.race([waitFor("600 answers", () => answers >= ANSWERED_BEFORE_KILL, 150_000), doomed.exited.then((c) => Promise.reject(new Error(`worker exited: ${c}`)))]),
      155_000,
    );
    // The worker records each answer as it arrives: give it a moment to write the last ones, then kill it.
    await waitFor("calls in flight to be held", () => ai.requests.length > ANSWERED_BEFORE_KILL, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const askedBeforeKill = ai.requests.length;
    doomed.child.kill("SIGKILL");
    expect(await doomed.exited).toBe("SIGKILL");
    const inFlightAtKill = askedBeforeKill - ANSWERED_BEFORE_KILL;
    ai.hangNext(0);

    const restarted = startExecutorWorker(resend.url, workerEnv);
    expect(await withTimeout("the restarted worker to finish", restarted.exited, 200_000)).toBe(0);

    const checkDb = await openForCheck();
    try {
      expect(await ledgerState(checkDb.db, runId)).toEqual({ status: "SUCCESS", done: ITEMS, total: ITEMS });
    } finally {
      await checkDb.close();
    }
    // Every item was answered exactly once: none of the 600 answered before the kill was asked again.
    expect(answered.size).toBe(ITEMS);
    expect([...answered.values()].every((n) => n === 1)).toBe(true);
    const askedTwice = ai.requests.length - ITEMS;
    expect(askedTwice).toBe(inFlightAtKill);
    expect(inFlightAtKill).toBeLessThanOrEqual(8);
    expect(resend.emails()).toHaveLength(ITEMS);
    console.log(`kill-mid-ai: ${ANSWERED_BEFORE_KILL} answered before the kill, ${inFlightAtKill} in flight (asked again after the restart)`);
  });
});
