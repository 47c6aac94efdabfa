/** Usage and cost of AI nodes: prices, the run's `ai` totals, the spend caps, reused answers. */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { accounts } from "@/db/schema";
import { aiItemPolicy } from "@/lib/nodes/ai/run-items";
import type { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { fakeResendForRuns, getRun, insertUpload, insertWorkflow, runToEnd, startTestExecutor } from "@/test/runs/helpers";
import { prompt, startFakeOpenAI, type FakeOpenAI } from "@/test/support/fake-openai";
import { accountWithAi, itemOf, peopleRows, perRowGraph, retry } from "./helpers";

fakeResendForRuns();
let ai: FakeOpenAI;
let executor: EmbeddedExecutor;
const policy = { ...aiItemPolicy };

beforeAll(async () => {
  ai = await startFakeOpenAI();
  executor = startTestExecutor();
});
afterAll(async () => {
  await ai.close();
});
beforeEach(() => {
  Object.assign(aiItemPolicy, policy, { backoffMs: 5, maxBackoffMs: 10 });
  ai.answer((req) => ({ greeting: `Hi ${itemOf(prompt(req))}` }));
});

// The fake reports 10 input and 10 output tokens a call: at $1,000 and $2,000 a million, a call costs $0.03.
const priced = { aiInputPricePerMillion: 1000, aiOutputPricePerMillion: 2000 };

describe("AI usage and cost", () => {
  it("prices every call with the account's prices: usage on the node, ai totals on the run", async () => {
    const { id, token } = await accountWithAi(ai.url, priced);
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(5));
    const run = await runToEnd(executor, token, await insertWorkflow(id, perRowGraph(uploadId)));
    expect(run.status).toBe("SUCCESS");
    expect(run.nodes.ai.output.usage).toEqual({ calls: 5, inputTokens: 50, outputTokens: 50, costUsd: expect.closeTo(0.15, 9) });
    expect(run.result.ai).toEqual({ calls: 5, inputTokens: 50, outputTokens: 50, costUsd: expect.closeTo(0.15, 9) });
  });

  it("stops at the account's spend cap with the sentence, and a retry after raising it asks only the rest", async () => {
    const { id, token } = await accountWithAi(ai.url, { ...priced, aiMaxConcurrency: 1, aiMaxCostPerRunUsd: 0.1 });
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(5));
    const marker = `cap-${uploadId}`;
    const failed = await runToEnd(executor, token, await insertWorkflow(id, perRowGraph(uploadId, { prompt: `${marker} [item {{item.name}}]` })));
    expect(failed.status).toBe("FAILED");
    // $0.09 after 3 calls; the 4th's input ($0.004) still fits under $0.10, the 5th's does not.
    expect(failed.nodes.ai.error).toBe("The AI spend cap of $0.10 for this run was reached after 4 of 5 items. Raise it and retry the run; finished items will not be asked again.");
    expect(failed.result.ai.calls).toBe(4);
    await (await getDb()).update(accounts).set({ aiMaxCostPerRunUsd: 1 }).where(eq(accounts.id, id));
    const before = ai.requests.filter((r) => prompt(r).includes(marker)).length;
    const again = await retry(token, failed.runId);
    await executor.idle();
    const run = (await getRun(token, again.body.runId)).body;
    expect(run.status).toBe("SUCCESS");
    expect(ai.requests.filter((r) => prompt(r).includes(marker)).length - before).toBe(1);
    expect(run.result.ai).toMatchObject({ calls: 5, costUsd: expect.closeTo(0.15, 9) });
  });

  it("fails before any call when a cap is set but no price is known", async () => {
    const { id, token } = await accountWithAi(ai.url);
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(2));
    const before = ai.requests.length;
    const run = await runToEnd(executor, token, await insertWorkflow(id, perRowGraph(uploadId, { maxCostUsd: 1 })));
    expect(run.status).toBe("FAILED");
    expect(run.nodes.ai.error).toMatch(/^The AI spend cap cannot be checked: no price is known for the model "fake-model"/);
    expect(ai.requests.length).toBe(before);
  });

  it("reuses an identical answer of the account within reuseAnswersDays instead of paying again", async () => {
    const { id, token } = await accountWithAi(ai.url, priced);
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(3));
    const marker = `reuse-${uploadId}`;
    const workflowId = await insertWorkflow(id, perRowGraph(uploadId, { prompt: `${marker} [item {{item.name}}]`, reuseAnswersDays: 7 }));
    const first = await runToEnd(executor, token, workflowId);
    const second = await runToEnd(executor, token, workflowId);
    expect(second.status).toBe("SUCCESS");
    expect(ai.requests.filter((r) => prompt(r).includes(marker))).toHaveLength(3);
    expect(second.nodes.ai.output.items).toEqual(first.nodes.ai.output.items);
    expect(second.nodes.ai.output.usage).toEqual({ calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 });
  });
});
