/**
 * Batch mode under the Inngest driver: waiting for the provider's batch never holds one invocation. The node's batch
 * step polls once and ends; the function sleeps (`step.sleep`) and runs the step again until the batch has ended.
 */
import { InngestTestEngine, mockCtx } from "@inngest/test";
import { sql } from "drizzle-orm";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { execRows, getDb } from "@/db/client";
import { runs } from "@/db/schema";
import { newId } from "@/lib/ids";
import { aiBatchPolicy } from "@/lib/ai/batch/run";
import { durableSleepMs, MAX_DURABLE_SLEEP_MS } from "@/lib/engine/drivers/inngest-steps";
import { executeRunFunction } from "@/inngest/functions/execute-run";
import { getRun, insertUpload, insertWorkflow } from "@/test/runs/helpers";
import { startFakeBatchApi } from "@/test/support/fake-batch-api";
import { accountWithAi, itemOf, peopleRows, perRowGraph } from "./helpers";

const policy = { ...aiBatchPolicy };
beforeEach(() => {
  Object.assign(aiBatchPolicy, policy, { pollMs: 20, stopCheckMs: 10 });
});
afterAll(() => {
  Object.assign(aiBatchPolicy, policy);
});

describe("AI batch mode under Inngest", () => {
  it("waits for the provider's batch with sleep steps between polls, and completes once it has ended", async () => {
    const api = await startFakeBatchApi("openai", { finishAfterPolls: 4 });
    try {
      api.answer((text) => ({ greeting: `Hi ${itemOf(text)}` }));
      const { id, token } = await accountWithAi(api.url, { aiProvider: "openai", aiModel: "gpt-4o-mini" });
      const uploadId = await insertUpload(id, ["name", "email"], peopleRows(3));
      // No OUTPUT: the run is the AI node's (its emails are another test's).
      const full = perRowGraph(uploadId, { mode: "batch" });
      const graph = { nodes: full.nodes.filter((n) => n.id !== "out"), edges: full.edges.filter((e) => e.target !== "out") };
      const workflowId = await insertWorkflow(id, graph);
      const runId = newId("run");
      await (await getDb()).insert(runs).values({ id: runId, workflowId, accountId: id, workflowVersion: 1, graph });

      // The steps and sleeps each execution of the function met (a replay meets the earlier ones again).
      const ran = new Set<string>();
      const slept = new Set<string>();
      const engine = new InngestTestEngine({
        function: executeRunFunction,
        events: [{ name: "flowmail/run.wake", data: { workflowId } }],
        transformCtx: (raw) => {
          const ctx = mockCtx(raw);
          const step = ctx.step as unknown as { run: (id: string, fn: () => unknown) => unknown; sleep: (id: string, ms: number) => unknown };
          const [run, sleep] = [step.run.bind(step), step.sleep.bind(step)];
          step.run = (id, fn) => (ran.add(id), run(id, fn));
          step.sleep = (id, ms) => (slept.add(id), sleep(id, ms));
          return ctx;
        },
        // The test engine does not sleep: a sleep step is done when mocked. More are mocked than the run needs.
        steps: Array.from({ length: 10 }, (_, n) => ({ id: `node:ai:batch:0:wait:${n + 1}`, handler: () => undefined })),
      });
      const { result } = await engine.execute();
      expect(result).toEqual({ runId });
      const run = (await getRun(token, runId)).body;
      expect(run.status).toBe("SUCCESS");
      expect(run.nodes.ai.output).toMatchObject({ count: 3, failed: 0, usage: { calls: 3 } });
      expect(run.nodes.ai.output.items.map((i: { greeting: string }) => i.greeting)).toEqual(["Hi P0", "Hi P1", "Hi P2"]);

      // One batch, its status asked four times (once per run of the step, a sleep between two runs; it ended at the
      // fourth), and once more by the read of its results.
      expect(api.stats.created).toBe(1);
      expect(api.batches[0].polls).toBe(5);
      expect(api.stats.resultReads).toBe(1);
      expect([...slept]).toEqual(["node:ai:batch:0:wait:1", "node:ai:batch:0:wait:2", "node:ai:batch:0:wait:3"]);
      expect([...ran].filter((id) => id === "node:ai" || id.startsWith("node:ai:"))).toEqual([
        "node:ai",
        "node:ai:batch:0",
        "node:ai:batch:0:poll:1",
        "node:ai:batch:0:poll:2",
        "node:ai:batch:0:poll:3",
        "node:ai:done",
      ]);
      const [batch] = await execRows<{ state: string; batch_id: string }>(await getDb(), sql`select state, batch_id from ai_batches where run_id = ${runId}`);
      expect(batch).toEqual({ state: "collected", batch_id: api.batches[0].id });
    } finally {
      await api.close();
    }
  });

  it("sleeps what the node asks (1 s at least), growing by half a poll up to five minutes", () => {
    expect([1, 2, 3, 4].map((n) => durableSleepMs(30_000, n))).toEqual([30_000, 45_000, 67_500, 101_250]);
    expect(durableSleepMs(30_000, 40)).toBe(MAX_DURABLE_SLEEP_MS);
    expect(durableSleepMs(20, 3)).toBe(1_000);
    expect(durableSleepMs(600_000, 1)).toBe(600_000);
  });
});
