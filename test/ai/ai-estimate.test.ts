/** Estimate mode: POST run { mode: "estimate", sample } tokenizes every prompt, asks for a sample, sends nothing. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { countCallTokens } from "@/lib/ai/tokens";
import { fakeResendForRuns, getRun, insertUpload, insertWorkflow, startTestExecutor } from "@/test/runs/helpers";
import { POST as enqueueHandler } from "@/app/api/workflows/[workflowId]/run/route";
import { call } from "@/test/support/http";
import { prompt, startFakeOpenAI, type FakeOpenAI } from "@/test/support/fake-openai";
import { accountWithAi, itemOf, peopleRows, perRowGraph } from "./helpers";

const mail = fakeResendForRuns();
let ai: FakeOpenAI;
let executor: EmbeddedExecutor;

beforeAll(async () => {
  ai = await startFakeOpenAI();
  executor = startTestExecutor();
});
afterAll(async () => {
  await ai.close();
});

const post = (token: string, workflowId: string, json: unknown) =>
  call(enqueueHandler, { method: "POST", path: `/api/workflows/${workflowId}/run`, token, params: { workflowId }, json });

describe("AI estimate", () => {
  it("tokenizes every item exactly for an OpenAI model, asks only the sample, extrapolates, and skips everything after", async () => {
    ai.answer((req) => ({ greeting: `Hi ${itemOf(prompt(req))}` }));
    const { id, token } = await accountWithAi(ai.url, { aiProvider: "openai", aiModel: "gpt-4o-mini" });
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(5));
    const marker = `est-${uploadId}`;
    const workflowId = await insertWorkflow(id, perRowGraph(uploadId, { prompt: `${marker} [item {{item.name}}]` }));
    const sentBefore = mail.resend.emails().length;
    const res = await post(token, workflowId, { mode: "estimate", sample: 2 });
    expect(res.status).toBe(202);
    await executor.idle();
    const run = (await getRun(token, res.body.runId)).body;
    expect(run.status).toBe("SUCCESS");
    expect(run.mode).toBe("estimate");
    expect(run.nodes.out.status).toBe("SKIPPED");
    expect(mail.resend.emails().length).toBe(sentBefore);
    expect(ai.requests.filter((r) => prompt(r).includes(marker)).map((r) => itemOf(prompt(r))).sort()).toEqual(["P0", "P4"]);

    const output = [{ name: "greeting", type: "string" as const }];
    const inputTokens = peopleRows(5).reduce((sum, [name]) => sum + countCallTokens("openai", "gpt-4o-mini", undefined, `${marker} [item ${name}]`, output).tokens, 0);
    const estimate = run.result.estimate.nodes.ai;
    expect(estimate).toMatchObject({ items: 5, inputTokens, outputTokens: 50, exact: true });
    expect(estimate.costUsd).toBeCloseTo((inputTokens * 0.15 + 50 * 0.6) / 1e6, 12);
    expect(estimate.sample).toEqual([
      { index: 0, output: { greeting: "Hi P0" }, inputTokens: 10, outputTokens: 10 },
      { index: 4, output: { greeting: "Hi P4" }, inputTokens: 10, outputTokens: 10 },
    ]);
    expect(run.result.estimate).toMatchObject({ inputTokens, outputTokens: 50, costUsd: estimate.costUsd });
    expect(run.result.ai).toMatchObject({ calls: 2 });
  });

  it("samples items spread over the list, so answers that grow along it are extrapolated from all of it", async () => {
    // Item i's answer is 10·(i+1) tokens: 550 for ten items. The first three would say 200 (10, 20, 30 → 20 a item).
    ai.answer((req) => ({ greeting: `Hi ${itemOf(prompt(req))}` }));
    ai.countUsage((req) => ({ promptTokens: 10, completionTokens: 10 * (Number(itemOf(prompt(req)).slice(1)) + 1) }));
    try {
      const { id, token } = await accountWithAi(ai.url, { aiProvider: "openai", aiModel: "gpt-4o-mini" });
      const uploadId = await insertUpload(id, ["name", "email"], peopleRows(10));
      const marker = `spread-${uploadId}`;
      const workflowId = await insertWorkflow(id, perRowGraph(uploadId, { prompt: `${marker} [item {{item.name}}]` }));
      const res = await post(token, workflowId, { mode: "estimate", sample: 3 });
      expect(res.status).toBe(202);
      await executor.idle();
      const run = (await getRun(token, res.body.runId)).body;
      expect(run.status).toBe("SUCCESS");
      // The first, the middle and the last item, asked once each.
      expect(ai.requests.filter((r) => prompt(r).includes(marker)).map((r) => itemOf(prompt(r))).sort()).toEqual(["P0", "P5", "P9"]);
      const estimate = run.result.estimate.nodes.ai;
      expect(estimate.sample.map((s: { index: number; output: { greeting: string }; outputTokens: number }) => [s.index, s.output.greeting, s.outputTokens])).toEqual([
        [0, "Hi P0", 10],
        [5, "Hi P5", 60],
        [9, "Hi P9", 100],
      ]);
      // (10 + 60 + 100) / 3 · 10 items.
      expect(estimate.outputTokens).toBe(567);
      expect(run.result.ai).toMatchObject({ calls: 3 });
    } finally {
      ai.countUsage(null);
    }
  });

  it("says an estimate for a model without a public tokenizer is approximate, and refuses a sample out of range", async () => {
    ai.answer(() => ({ greeting: "Hi" }));
    const { id, token } = await accountWithAi(ai.url);
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(4));
    const workflowId = await insertWorkflow(id, perRowGraph(uploadId));
    const res = await post(token, workflowId, { mode: "estimate" });
    expect(res.status).toBe(202);
    await executor.idle();
    const run = (await getRun(token, res.body.runId)).body;
    expect(run.result.estimate.nodes.ai).toMatchObject({ items: 4, exact: false, costUsd: null });
    expect(run.result.estimate.nodes.ai.sample).toHaveLength(3);
    expect(run.result.estimate.costUsd).toBeNull();
    for (const body of [{ mode: "estimate", sample: 21 }, { mode: "estimate", sample: 0 }, { mode: "live", sample: 2 }]) {
      const refused = await post(token, workflowId, body);
      expect(refused.status, JSON.stringify(body)).toBe(422);
      expect(refused.body.errors[0].path).toBe("sample");
    }
  });
});
