/** Usage and cost of AI nodes: prices, the run's `ai` totals, the spend caps, reused answers. */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { accounts } from "@/db/schema";
import { getRun, insertUpload, insertWorkflow, runToEnd } from "@/test/runs/helpers";
import { prompt } from "@/test/support/fake-openai";
import { accountWithAi, aiTestBed, peopleRows, perRowGraph, retry } from "./helpers";

const bed = aiTestBed({ backoffMs: 5, maxBackoffMs: 10 });

// The fake reports 10 input and 10 output tokens a call: at $1,000 and $2,000 a million, a call costs $0.03.
const priced = { aiInputPricePerMillion: 1000, aiOutputPricePerMillion: 2000 };

describe("AI usage and cost", () => {
  it("prices every call with the account's prices: usage on the node, ai totals on the run", async () => {
    const { id, token } = await accountWithAi(bed.ai.url, priced);
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(5));
    const run = await runToEnd(bed.executor, token, await insertWorkflow(id, perRowGraph(uploadId)));
    expect(run.status).toBe("SUCCESS");
    expect(run.nodes.ai.output.usage).toEqual({ calls: 5, inputTokens: 50, outputTokens: 50, costUsd: expect.closeTo(0.15, 9) });
    expect(run.result.ai).toEqual({ calls: 5, inputTokens: 50, outputTokens: 50, costUsd: expect.closeTo(0.15, 9) });
  });

  it("stops at the account's spend cap with the sentence, and a retry after raising it asks only the rest", async () => {
    const { id, token } = await accountWithAi(bed.ai.url, { ...priced, aiMaxConcurrency: 1, aiMaxCostPerRunUsd: 0.1 });
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(5));
    const marker = `cap-${uploadId}`;
    const failed = await runToEnd(bed.executor, token, await insertWorkflow(id, perRowGraph(uploadId, { prompt: `${marker} [item {{item.name}}]` })));
    expect(failed.status).toBe("FAILED");
    // $0.09 after 3 calls; the 4th's input ($0.004) still fits under $0.10, the 5th's does not.
    expect(failed.nodes.ai.error).toBe("The AI spend cap of $0.10 for this run was reached after 4 of 5 items. Raise it and retry the run; finished items will not be asked again.");
    expect(failed.result.ai.calls).toBe(4);
    await (await getDb()).update(accounts).set({ aiMaxCostPerRunUsd: 1 }).where(eq(accounts.id, id));
    const before = bed.ai.requests.filter((r) => prompt(r).includes(marker)).length;
    const again = await retry(token, failed.runId);
    await bed.executor.idle();
    const run = (await getRun(token, again.body.runId)).body;
    expect(run.status).toBe("SUCCESS");
    expect(bed.ai.requests.filter((r) => prompt(r).includes(marker)).length - before).toBe(1);
    expect(run.result.ai).toMatchObject({ calls: 5, costUsd: expect.closeTo(0.15, 9) });
  });

  it("fails before any call when a cap is set but no price is known", async () => {
    const { id, token } = await accountWithAi(bed.ai.url);
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(2));
    const before = bed.ai.requests.length;
    const run = await runToEnd(bed.executor, token, await insertWorkflow(id, perRowGraph(uploadId, { maxCostUsd: 1 })));
    expect(run.status).toBe("FAILED");
    expect(run.nodes.ai.error).toMatch(/^The AI spend cap cannot be checked: no price is known for the model "fake-model"/);
    expect(bed.ai.requests.length).toBe(before);
  });

  it("reuses an identical answer of the account within reuseAnswersDays instead of paying again", async () => {
    const { id, token } = await accountWithAi(bed.ai.url, priced);
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(3));
    const marker = `reuse-${uploadId}`;
    const workflowId = await insertWorkflow(id, perRowGraph(uploadId, { prompt: `${marker} [item {{item.name}}]`, reuseAnswersDays: 7 }));
    const first = await runToEnd(bed.executor, token, workflowId);
    const second = await runToEnd(bed.executor, token, workflowId);
    expect(second.status).toBe("SUCCESS");
    expect(bed.ai.requests.filter((r) => prompt(r).includes(marker))).toHaveLength(3);
    expect(second.nodes.ai.output.items).toEqual(first.nodes.ai.output.items);
    expect(second.nodes.ai.output.usage).toEqual({ calls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 });
  });
});
