/**
 * Fault: the provider refuses item 1,200 of a 2,000-item AI node with a 400 (a refused request: that item fails for
 * good, onItemError "fail"). The run is FAILED, naming the item; the provider is fixed and the run retried: the retry
 * SUCCEEDS, and no item was asked twice — the refused one is asked again (its failure is not an answer), every item
 * answered in the failed run (those in flight when it stopped included) is not. The fake counts calls per prompt.
 * Then every item's email is sent once. Runs on PGlite and on PostgreSQL (TEST_DATABASE_URL); prints the figures.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aiItemPolicy } from "@/lib/nodes/ai/run-items";
import { fakeResendForRuns, getRun, insertUpload, insertWorkflow, runToEnd, startTestExecutor } from "@/test/runs/helpers";
import { prompt, startFakeOpenAI, type FakeOpenAI } from "@/test/support/fake-openai";
import { accountWithAi, itemOf, peopleRows, perRowGraph, retry } from "@/test/ai/helpers";
import type { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { loadAverage } from "./server-fixture";

const ITEMS = 2000;
const REFUSED = "P1200";

const mail = fakeResendForRuns();
let ai: FakeOpenAI;
let executor: EmbeddedExecutor;

beforeAll(async () => {
  Object.assign(aiItemPolicy, { backoffMs: 5, maxBackoffMs: 10, stopCheckMs: 50 });
  ai = await startFakeOpenAI();
  executor = startTestExecutor(2);
});
afterAll(async () => {
  await ai.close();
});

describe("retry after the provider refused item 1,200 of a 2,000-item AI node", () => {
  it("fails naming the item; the retry succeeds and asks no answered item again", async () => {
    const { id, token } = await accountWithAi(ai.url);
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(ITEMS));
    const answered = new Map<string, number>();
    ai.answer((req) => {
      const name = itemOf(prompt(req));
      answered.set(name, (answered.get(name) ?? 0) + 1);
      return { greeting: `Hi ${name}` };
    });
    ai.refuse((req) => itemOf(prompt(req)) === REFUSED);

    const failed = await runToEnd(executor, token, await insertWorkflow(id, perRowGraph(uploadId)));
    expect(failed.status).toBe("FAILED");
    expect(failed.nodes.ai.error).toMatch(/^Item 1,200 failed: The AI provider answered with an error \(HTTP 400/);
    expect(failed.nodes.out.status).toBe("SKIPPED");
    const askedByFailed = ai.requests.length;
    const answeredByFailed = answered.size;
    expect(ai.callsFor(`[item ${REFUSED}]`)).toBe(1);

    ai.refuse(null);
    const again = await retry(token, failed.runId);
    expect(again.status).toBe(202);
    await executor.idle();
    const run = (await getRun(token, again.body.runId)).body;
    expect(run.status).toBe("SUCCESS");
    expect(run.nodes.ai.output).toMatchObject({ count: ITEMS, failed: 0 });

    // Every item answered exactly once; the refused one was asked twice (refused, then answered), no other item was.
    expect(answered.size).toBe(ITEMS);
    expect([...answered.values()].every((n) => n === 1)).toBe(true);
    expect(ai.callsFor(`[item ${REFUSED}]`)).toBe(2);
    expect(ai.requests.length).toBe(ITEMS + 1);
    const sent = mail.resend.emails().map((e) => e.to[0]);
    expect(sent).toHaveLength(ITEMS);
    expect(new Set(sent).size).toBe(ITEMS);
    console.log(
      `retry-refused-ai (loadavg ${loadAverage()}): the failed run asked ${askedByFailed} (${answeredByFailed} answered, 1 refused); ` +
        `the retry asked ${ai.requests.length - askedByFailed}; ${ai.requests.length} calls for ${ITEMS} items`,
    );
  });
});
