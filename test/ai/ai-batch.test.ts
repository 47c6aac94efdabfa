/**
 * Batch mode of the AI node end to end: the embedded executor and the AI SDK's batch support against local fakes of
 * the OpenAI Batch API and Anthropic's Message Batches API. Each item is answered once and recorded in the answer
 * ledger at half price; a cancel of the run cancels the provider's batch; per-item errors follow onItemError; a
 * provider without a batch API is refused at save time.
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import * as workflowsRoute from "@/app/api/workflows/route";
import { execRows, getDb, getRunStateDb } from "@/db/client";
import { executeRun, inlineStep } from "@/lib/engine/core/execute-run";
import { pgEngineDeps } from "@/lib/engine/pg-engine";
import { PgRunStore } from "@/lib/engine/pg/pg-run-store";
import { aiBatchPolicy } from "@/lib/ai/batch/run";
import { pgBatchStore, type AiBatchStore } from "@/lib/ai/batch/store";
import type { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { enqueue, fakeResendForRuns, getRun, insertUpload, insertWorkflow, runToEnd, startTestExecutor, stopTestExecutor } from "@/test/runs/helpers";
import { BATCH_INPUT_TOKENS, BATCH_OUTPUT_TOKENS, startFakeBatchApi, type FakeBatchApi } from "@/test/support/fake-batch-api";
import { call } from "@/test/support/http";
import { accountWithAi, aiItems, cancel, itemOf, peopleRows, perRowGraph, retry } from "./helpers";

const mail = fakeResendForRuns();
let openai: FakeBatchApi;
let anthropic: FakeBatchApi;
let executor: EmbeddedExecutor;
const policy = { ...aiBatchPolicy };

beforeAll(async () => {
  openai = await startFakeBatchApi("openai");
  anthropic = await startFakeBatchApi("anthropic");
  executor = startTestExecutor();
});
afterAll(async () => {
  Object.assign(aiBatchPolicy, policy);
  await openai.close();
  await anthropic.close();
});
beforeEach(() => {
  Object.assign(aiBatchPolicy, policy, { pollMs: 20, stopCheckMs: 10 });
  for (const api of [openai, anthropic]) api.answer((text) => ({ greeting: `Hi ${itemOf(text)}` }));
});

const batchGraph = (uploadId: string, ai: Record<string, unknown> = {}) => perRowGraph(uploadId, { mode: "batch", ...ai });

/** An account whose provider is `api`'s (openai or anthropic, at the fake's URL), with the model's list price. */
const batchAccount = (api: FakeBatchApi) =>
  accountWithAi(api.url, { aiProvider: api.provider, aiModel: api.provider === "openai" ? "gpt-4o-mini" : "claude-3-5-haiku-latest" });

async function batchRows(runId: string) {
  return execRows<{ seq: number; state: string; batch_id: string | null; item_count: number }>(
    await getDb(),
    sql`select seq, state, batch_id, item_count from ai_batches where run_id = ${runId} order by seq`,
  );
}

describe.each(["openai", "anthropic"] as const)("AI batch mode (%s)", (provider) => {
  const api = () => (provider === "openai" ? openai : anthropic);

  it("submits the items as one provider batch, polls it, and records each answer once at half price", async () => {
    const { id, token } = await batchAccount(api());
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(6));
    const created = api().stats.created;
    const run = await runToEnd(executor, token, await insertWorkflow(id, batchGraph(uploadId)));
    expect(run.status).toBe("SUCCESS");
    expect(api().stats.created - created).toBe(1);
    const batch = api().batches.at(-1)!;
    expect(batch.items.map((i) => itemOf(i.text))).toEqual(["P0", "P1", "P2", "P3", "P4", "P5"]);
    expect(run.nodes.ai.output.items[3]).toEqual({ name: "P3", email: "p3@example.com", greeting: "Hi P3" });
    // Half the list price: gpt-4o-mini $0.15/$0.60, claude-3-5-haiku $0.80/$4 per million tokens.
    const [input, output] = provider === "openai" ? [0.15, 0.6] : [0.8, 4];
    const cost = (6 * (BATCH_INPUT_TOKENS * input + BATCH_OUTPUT_TOKENS * output)) / 1_000_000 / 2;
    expect(run.nodes.ai.output.count).toBe(6);
    expect(run.nodes.ai.output.usage).toMatchObject({ calls: 6, inputTokens: 6 * BATCH_INPUT_TOKENS, outputTokens: 6 * BATCH_OUTPUT_TOKENS });
    expect(run.nodes.ai.output.usage.costUsd).toBeCloseTo(cost, 12);
    expect(await batchRows(run.runId)).toEqual([{ seq: 0, state: "collected", batch_id: batch.id, item_count: 6 }]);
    const sent = mail.resend.emails().filter((e) => e.text?.startsWith("Hi P") && e.to[0].endsWith("@example.com"));
    expect(sent.length).toBeGreaterThanOrEqual(6);
  });

  it("onItemError skip: an item the provider refused is left out and counted; fail: the node fails naming it", async () => {
    const { id, token } = await batchAccount(api());
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(4));
    api().answer((text) => (itemOf(text) === "P2" ? { error: "This prompt was refused" } : { greeting: `Hi ${itemOf(text)}` }));
    const skipped = await runToEnd(executor, token, await insertWorkflow(id, batchGraph(uploadId, { onItemError: "skip" })));
    expect(skipped.status).toBe("SUCCESS");
    expect(skipped.nodes.ai.output).toMatchObject({ count: 3, failed: 1 });
    const page = await aiItems(token, skipped.runId, "ai", "?status=failed");
    expect(page.body.items).toHaveLength(1);
    expect(page.body.items[0]).toMatchObject({ index: 2, status: "failed" });
    expect(page.body.items[0].error).toMatch(/^Item 2: The AI provider refused this item.*This prompt was refused/);

    const failed = await runToEnd(executor, token, await insertWorkflow(id, batchGraph(uploadId)));
    expect(failed.status).toBe("FAILED");
    expect(failed.nodes.ai.status).toBe("FAILED");
    expect(failed.nodes.ai.error).toMatch(/^Item 2 failed: The AI provider refused this item/);
  });

  it("a cancel of the run while the provider works cancels the provider's batch", async () => {
    const { id, token } = await batchAccount(api());
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(3));
    const slow = await startFakeBatchApi(provider, { finishAfterMs: 3_600_000 });
    try {
      const account = await batchAccountAt(id, slow);
      const res = await enqueue(token, await insertWorkflow(account, batchGraph(uploadId)));
      for (let i = 0; i < 400 && slow.stats.polls < 2; i++) await new Promise((r) => setTimeout(r, 25));
      expect(slow.stats.created).toBe(1);
      expect(slow.stats.polls).toBeGreaterThanOrEqual(2);
      // The node's RUNNING row is written with the run's next write of its own (the store batches them).
      let running = (await getRun(token, res.body.runId)).body;
      for (let i = 0; i < 800 && !(running.nodes.ai.status === "RUNNING" && running.nodes.ai.progress); i++) {
        await new Promise((r) => setTimeout(r, 25));
        running = (await getRun(token, res.body.runId)).body;
      }
      expect((await cancel(token, res.body.runId)).status).toBe(202);
      expect(running.nodes.ai).toMatchObject({ status: "RUNNING", progress: { done: 0, total: 3 } });
      await executor.idle();
      const run = (await getRun(token, res.body.runId)).body;
      expect(run.status).toBe("FAILED");
      expect(run.error).toBe("Cancelled");
      expect(slow.stats.cancels).toBe(1);
      expect(slow.batches[0].cancelled).toBe(true);
      expect(await batchRows(res.body.runId)).toMatchObject([{ seq: 0, state: "cancelled" }]);
    } finally {
      await slow.close();
    }
  });
});

describe("AI batch mode: a cancel while no process holds the run", () => {
  it("cancels the provider's batch when the run is finalized cancelled without running the node again", async () => {
    // This test plays the processes itself: no executor picks the run up behind its back.
    await stopTestExecutor();
    const slow = await startFakeBatchApi("openai", { finishAfterMs: 3_600_000 });
    try {
      const { id, token } = await batchAccount(openai);
      await batchAccountAt(id, slow);
      const uploadId = await insertUpload(id, ["name", "email"], peopleRows(3));
      const workflowId = await insertWorkflow(id, batchGraph(uploadId));
      const runId = (await enqueue(token, workflowId)).body.runId as string;
      const db = await getDb();
      // A process that goes away while the provider works: its store hands the run back once the batch was polled.
      class GoingAway extends PgRunStore {
        override stopReason(id: string, options?: { fresh?: boolean }) {
          return slow.stats.polls >= 1 ? Promise.resolve("handback" as const) : super.stopReason(id, options);
        }
      }
      const store = new GoingAway(await getRunStateDb(), { inline: true });
      const claimed = await store.claimNext(workflowId);
      await executeRun(inlineStep, { ...pgEngineDeps(db, async () => {}), store }, runId, claimed!);
      expect((await getRun(token, runId)).body.status).toBe("RUNNING");
      expect(slow.stats.created).toBe(1);
      expect(await batchRows(runId)).toMatchObject([{ seq: 0, state: "running" }]);
      // Cancelled while no process holds it; the next process takes it over and finalizes it before any node runs.
      expect((await cancel(token, runId)).status).toBe(202);
      expect(slow.stats.cancels).toBe(0);
      await executeRun(inlineStep, pgEngineDeps(db, async () => {}), runId);
      expect((await getRun(token, runId)).body).toMatchObject({ status: "FAILED", error: "Cancelled" });
      expect(slow.stats.cancels).toBe(1);
      expect(slow.batches[0].cancelled).toBe(true);
      expect(await batchRows(runId)).toMatchObject([{ seq: 0, state: "cancelled" }]);
    } finally {
      executor = startTestExecutor();
      await slow.close();
    }
  });
});

describe.each(["openai", "anthropic"] as const)("AI batch mode: a process that stops between the provider's acceptance and the record of the id (%s)", (provider) => {
  const crash = new Error("the process stopped here");

  /**
   * Plays the process that stops: its batch store fails where the batch id would be written, as a kill -9 there
   * would (the error is an outage: the run stays RUNNING for the next process).
   */
  async function crashAfterSubmission(api: FakeBatchApi, rows = 4) {
    const { id, token } = await batchAccount(api);
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(rows));
    const workflowId = await insertWorkflow(id, batchGraph(uploadId));
    const runId = (await enqueue(token, workflowId)).body.runId as string;
    const db = await getDb();
    const base = pgEngineDeps(db, async () => {});
    const crashing: AiBatchStore = { ...pgBatchStore(db), submitted: () => Promise.reject(crash) };
    const store = new PgRunStore(await getRunStateDb(), { inline: true });
    const claimed = await store.claimNext(workflowId);
    const deps = { ...base, store, ports: { ...base.ports, aiBatches: crashing }, isOutage: (e: unknown) => e === crash || base.isOutage!(e) };
    await expect(executeRun(inlineStep, deps, runId, claimed!)).rejects.toBe(crash);
    return { token, runId, db };
  }

  const counting = (api: FakeBatchApi) => {
    const asked = new Map<string, number>();
    api.answer((text) => {
      asked.set(itemOf(text), (asked.get(itemOf(text)) ?? 0) + 1);
      return { greeting: `Hi ${itemOf(text)}` };
    });
    return asked;
  };

  it("the next process finds the batch at the provider and polls it: one provider batch, each answer recorded once", async () => {
    await stopTestExecutor();
    const api = await startFakeBatchApi(provider);
    try {
      const asked = counting(api);
      // The row is looked up once its submission's call has surely ended (a few seconds here, 6 minutes in production).
      Object.assign(aiBatchPolicy, { callTimeoutMs: 3_000, submitGraceMs: 0 });
      const { token, runId, db } = await crashAfterSubmission(api);
      expect(api.stats.created).toBe(1);
      expect(await batchRows(runId)).toEqual([{ seq: 0, state: "submitting", batch_id: null, item_count: 4 }]);

      // The next process (a restart, a takeover) resumes the run.
      await executeRun(inlineStep, pgEngineDeps(db, async () => {}), runId);
      const run = (await getRun(token, runId)).body;
      expect(run.status).toBe("SUCCESS");
      expect(api.stats.created).toBe(1);
      expect(api.stats.lists).toBeGreaterThanOrEqual(1);
      expect(await batchRows(runId)).toEqual([{ seq: 0, state: "collected", batch_id: api.batches[0].id, item_count: 4 }]);
      expect([...asked.entries()].sort()).toEqual([["P0", 1], ["P1", 1], ["P2", 1], ["P3", 1]]);
      expect(run.nodes.ai.output).toMatchObject({ count: 4, failed: 0, usage: { calls: 4, inputTokens: 4 * BATCH_INPUT_TOKENS, outputTokens: 4 * BATCH_OUTPUT_TOKENS } });
      expect(run.nodes.ai.output.items.map((i: { greeting: string }) => i.greeting)).toEqual(["Hi P0", "Hi P1", "Hi P2", "Hi P3"]);
      const [items] = await execRows<{ done: number; total: number }>(
        db,
        sql`select count(*) filter (where status = 'done')::int as done, count(*)::int as total from ai_items where run_id = ${runId}`,
      );
      expect(items).toEqual({ done: 4, total: 4 });
      // OpenAI keeps the tag in the batch's metadata; Anthropic's batches have none (the requests' ids carry it).
      expect(api.batches[0].metadata).toEqual(provider === "openai" ? { flowmail_batch: expect.stringMatching(/^fm[0-9a-f]{24}$/) } : null);
      expect(api.batches[0].items.map((i) => i.customId)).toEqual([0, 1, 2, 3].map((n) => expect.stringMatching(new RegExp(`^fm[0-9a-f]{24}-item-${n}$`))));
    } finally {
      executor = startTestExecutor();
      await api.close();
    }
  });

  it.runIf(provider === "openai")("a cancel of the run finds such a batch at the provider and cancels it there", async () => {
    await stopTestExecutor();
    const slow = await startFakeBatchApi(provider, { finishAfterMs: 3_600_000 });
    try {
      const { token, runId, db } = await crashAfterSubmission(slow, 2);
      expect(slow.stats.created).toBe(1);
      // Cancelled while no process holds it; the next process finalizes it without running the node again.
      expect((await cancel(token, runId)).status).toBe(202);
      await executeRun(inlineStep, pgEngineDeps(db, async () => {}), runId);
      expect((await getRun(token, runId)).body).toMatchObject({ status: "FAILED", error: "Cancelled" });
      expect(slow.stats.cancels).toBe(1);
      expect(slow.batches[0].cancelled).toBe(true);
      expect(await batchRows(runId)).toEqual([{ seq: 0, state: "cancelled", batch_id: slow.batches[0].id, item_count: 2 }]);
    } finally {
      executor = startTestExecutor();
      await slow.close();
    }
  });

  it.runIf(provider === "anthropic")("a batch of as many requests still in progress is waited for, never submitted twice, then adopted", async () => {
    await stopTestExecutor();
    const slow = await startFakeBatchApi(provider, { finishAfterMs: 3_600_000 });
    try {
      const asked = counting(slow);
      Object.assign(aiBatchPolicy, { callTimeoutMs: 3_000, submitGraceMs: 0 });
      const { token, runId, db } = await crashAfterSubmission(slow, 3);
      const resumed = executeRun(inlineStep, pgEngineDeps(db, async () => {}), runId);
      // The batch lists no tag while it works: the look-up waits for it to end instead of submitting again.
      for (let i = 0; i < 2000 && slow.stats.lists < 3; i++) await new Promise((r) => setTimeout(r, 10));
      expect(slow.stats.lists).toBeGreaterThanOrEqual(3);
      expect(slow.stats.created).toBe(1);
      expect(await batchRows(runId)).toMatchObject([{ seq: 0, state: "submitting", batch_id: null }]);
      slow.finish();
      await resumed;
      const run = (await getRun(token, runId)).body;
      expect(run.status).toBe("SUCCESS");
      expect(slow.stats.created).toBe(1);
      expect(await batchRows(runId)).toEqual([{ seq: 0, state: "collected", batch_id: slow.batches[0].id, item_count: 3 }]);
      expect([...asked.values()]).toEqual([1, 1, 1]);
      expect(run.nodes.ai.output).toMatchObject({ count: 3, failed: 0, usage: { calls: 3 } });
    } finally {
      executor = startTestExecutor();
      await slow.close();
    }
  });
});

/** Points the account's provider at another fake (same provider). */
async function batchAccountAt(accountId: string, api: FakeBatchApi): Promise<string> {
  await (await getDb()).execute(sql`update accounts set ai_base_url = ${api.url} where id = ${accountId}`);
  return accountId;
}

describe("AI batch mode: what is asked once", () => {
  it("a retry of a failed batch run submits only the items not answered, and polls through a provider's bad moment", async () => {
    const { id, token } = await batchAccount(openai);
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(5));
    openai.answer((text) => (itemOf(text) === "P4" ? { error: "Refused once" } : { greeting: `Hi ${itemOf(text)}` }));
    const first = await runToEnd(executor, token, await insertWorkflow(id, batchGraph(uploadId)));
    expect(first.status).toBe("FAILED");
    openai.answer((text) => ({ greeting: `Hi ${itemOf(text)}` }));
    openai.failPolls(2);
    const polls = openai.stats.polls;
    const again = await retry(token, first.runId);
    expect(again.status).toBe(202);
    await executor.idle();
    const run = (await getRun(token, again.body.runId)).body;
    expect(run.status).toBe("SUCCESS");
    expect(openai.batches.at(-1)!.items.map((i) => itemOf(i.text))).toEqual(["P4"]);
    expect(openai.stats.polls - polls).toBeGreaterThanOrEqual(3);
    expect(run.nodes.ai.output).toMatchObject({ count: 5, failed: 0 });
  });

  it("a refused submission fails the node with the provider's sentence; a batch left without its id that the provider does not have is submitted again", async () => {
    const { id, token } = await batchAccount(anthropic);
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(3));
    anthropic.refuseNextBatch("requests: too many tokens");
    const created = anthropic.stats.created;
    const first = await runToEnd(executor, token, await insertWorkflow(id, batchGraph(uploadId)));
    expect(first.status).toBe("FAILED");
    expect(first.nodes.ai.error).toMatch(/^The AI provider's batch API answered with an error \(HTTP 400\): .*too many tokens.*No item of this batch was asked/);
    expect(anthropic.stats.created).toBe(created);
    expect(await batchRows(first.runId)).toMatchObject([{ seq: 0, state: "abandoned", batch_id: null }]);

    // A process that died after writing the row and before the provider accepted the batch leaves a row like this one:
    // the look-up finds no batch tagged with it at the provider.
    await (await getDb()).execute(sql`insert into ai_batches (run_id, node_id, seq, account_id, provider, items, item_count)
      values (${first.runId}, 'ai', 1, ${id}, 'anthropic', '[[0, "h"]]'::jsonb, 1)`);
    const again = await retry(token, first.runId);
    expect(again.status).toBe(202);
    await executor.idle();
    const run = (await getRun(token, again.body.runId)).body;
    expect(run.status).toBe("SUCCESS");
    expect(anthropic.stats.created).toBe(created + 1);
    expect(anthropic.stats.lists).toBeGreaterThanOrEqual(1);
    expect((await batchRows(first.runId)).map((r) => [r.seq, r.state])).toEqual([
      [0, "abandoned"],
      [1, "abandoned"],
      [2, "collected"],
    ]);
    expect(run.nodes.ai.output).toMatchObject({ count: 3, failed: 0 });
  });
});

describe("AI batch mode at save time", () => {
  const save = (token: string, graph: unknown) => call(workflowsRoute.POST, { json: { name: "Batch", graph }, token });

  it("refuses batch mode for a provider without a batch API (422 with the path), accepts it for OpenAI", async () => {
    const compatible = await accountWithAi("http://127.0.0.1:9/v1");
    const uploadId = await insertUpload(compatible.id, ["name", "email"], peopleRows(1));
    const refused = await save(compatible.token, batchGraph(uploadId));
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([expect.objectContaining({ path: "graph.nodes[2].data.mode", code: "invalid_node_data", nodeId: "ai" })]);
    expect(refused.body.errors[0].message).toMatch(/^Batch mode needs a provider with a batch API/);

    const withOpenAi = await batchAccount(openai);
    const okUpload = await insertUpload(withOpenAi.id, ["name", "email"], peopleRows(1));
    expect((await save(withOpenAi.token, batchGraph(okUpload))).status).toBe(201);
    // Without forEach batch mode has nothing to batch.
    const graph = batchGraph(okUpload);
    const once = { ...graph, nodes: graph.nodes.map((n) => (n.id === "ai" ? { ...n, data: { prompt: "Hi", output: [{ name: "greeting", type: "string" }], mode: "batch" } } : n)) };
    const single = await save(withOpenAi.token, once);
    expect(single.status).toBe(422);
    expect(single.body.errors.map((e: { path: string }) => e.path)).toContain("graph.nodes[2].data.mode");
  });
});
