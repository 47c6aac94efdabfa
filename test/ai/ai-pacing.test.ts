/**
 * The shared model-call limiter against a rate-limited fake provider (OpenAI's x-ratelimit-* headers, 429 beyond
 * the limit): counts of calls and 429s, never time.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enqueue, getRun, insertUpload, insertWorkflow, runToEnd } from "@/test/runs/helpers";
import { prompt } from "@/test/support/fake-openai";
import { startFakeAnthropic, type FakeAnthropic } from "@/test/support/fake-anthropic";
import { accountWithAi, aiTestBed, itemOf, peopleRows, perRowGraph } from "./helpers";

// The limits' minute is 15 s here (the fake's windows are a quarter of the real ones too), and a shared hold's jitter
// is 20 ms: the same pacing, four times faster.
const bed = aiTestBed({ backoffMs: 20, maxBackoffMs: 100 }, { minuteMs: 15_000, burstMs: 250, holdJitterMs: 20 });

/** Successful answers per item name among the requests carrying `marker`. */
function answersPerItem(marker: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of bed.ai.requests.filter((q) => prompt(q).includes(marker))) counts.set(itemOf(prompt(r)), (counts.get(itemOf(prompt(r))) ?? 0) + 1);
  return counts;
}

describe("AI pacing", () => {
  it("two runs sharing one key, paced to the account's requestsPerMinute, get no 429", async () => {
    // 10 requests a quarter second is 600 a (15 s) minute: the account says so, and the fake enforces it.
    bed.ai.limit({ requestsPerWindow: 10, windowMs: 250 });
    const { id, token } = await accountWithAi(bed.ai.url, { aiRequestsPerMinute: 600 });
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(12));
    const a = await insertWorkflow(id, perRowGraph(uploadId, { prompt: "A [item {{item.name}}]" }));
    const b = await insertWorkflow(id, perRowGraph(uploadId, { prompt: "B [item {{item.name}}]" }));
    const runs = await Promise.all([enqueue(token, a), enqueue(token, b)]);
    await bed.executor.idle();
    for (const res of runs) expect((await getRun(token, res.body.runId)).body.status).toBe("SUCCESS");
    expect(bed.ai.stats.rateLimited).toBe(0);
    expect(bed.ai.stats.ok).toBe(24);
  });

  it("without configured limits, follows the provider's headers: every 429 is waited out and no item is answered twice", async () => {
    bed.ai.limit({ requestsPerWindow: 5, windowMs: 125 });
    const { id, token } = await accountWithAi(bed.ai.url);
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(20));
    const run = await runToEnd(bed.executor, token, await insertWorkflow(id, perRowGraph(uploadId, { prompt: "H [item {{item.name}}]" })));
    expect(run.status).toBe("SUCCESS");
    expect(run.nodes.ai.output.count).toBe(20);
    expect(bed.ai.stats.ok).toBe(20);
    // A 429 tells the shared limiter to hold until the window resets: far fewer refusals than calls.
    expect(bed.ai.stats.rateLimited).toBeLessThan(20);
    expect([...answersPerItem("H [item").values()].reduce((a, b) => a + b, 0)).toBe(20 + bed.ai.stats.rateLimited);
  });

  it("keeps at most maxConcurrency calls in flight", async () => {
    bed.ai.delayMs(30);
    const { id, token } = await accountWithAi(bed.ai.url, { aiMaxConcurrency: 2 });
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(10));
    const run = await runToEnd(bed.executor, token, await insertWorkflow(id, perRowGraph(uploadId)));
    expect(run.status).toBe("SUCCESS");
    expect(bed.ai.stats.maxInFlight).toBe(2);
  });

  it("fails the node at once on an exhausted quota, with what is done", async () => {
    bed.ai.quotaExhausted(true);
    const { id, token } = await accountWithAi(bed.ai.url);
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(3));
    const before = bed.ai.requests.length;
    const run = await runToEnd(bed.executor, token, await insertWorkflow(id, perRowGraph(uploadId, { prompt: "Q [item {{item.name}}]" })));
    expect(run.status).toBe("FAILED");
    expect(run.nodes.ai.error).toBe("The AI provider's quota is used up: 0 of 3 items are done. Retry the run after topping up; finished items will not be asked again.");
    expect(bed.ai.requests.length - before).toBeLessThanOrEqual(3); // never asked again
  });
});

describe("AI pacing with Anthropic's headers", () => {
  let claude: FakeAnthropic;
  beforeAll(async () => {
    claude = await startFakeAnthropic();
  });
  afterAll(async () => {
    await claude.close();
  });

  it("waits out 429s by retry-after and anthropic-ratelimit-* (ignoring a nonsensical family), answering every item once", async () => {
    claude.limit({ requestsPerWindow: 4, windowMs: 250 });
    claude.answer((text) => ({ greeting: `Hi ${itemOf(text)}` }));
    const { id, token } = await accountWithAi(claude.url, { aiProvider: "anthropic", aiModel: "claude-3-5-haiku-latest" });
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(10));
    const run = await runToEnd(bed.executor, token, await insertWorkflow(id, perRowGraph(uploadId)));
    expect(run.status).toBe("SUCCESS");
    expect(run.nodes.ai.output.items.map((i: { greeting: string }) => i.greeting)).toEqual(peopleRows(10).map(([name]) => `Hi ${name}`));
    expect(run.nodes.ai.output.usage).toMatchObject({ calls: 10, inputTokens: 120, outputTokens: 80 });
    expect(claude.stats.ok).toBe(10);
    expect(claude.stats.rateLimited).toBeLessThan(10);
  });

  it("fails the node at once on a billing error", async () => {
    claude.limit(null);
    claude.billingError(true);
    const { id, token } = await accountWithAi(claude.url, { aiProvider: "anthropic", aiModel: "claude-3-5-haiku-latest" });
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(2));
    const run = await runToEnd(bed.executor, token, await insertWorkflow(id, perRowGraph(uploadId)));
    expect(run.status).toBe("FAILED");
    expect(run.nodes.ai.error).toMatch(/^The AI provider's quota is used up: 0 of 2 items are done\./);
  });
});
