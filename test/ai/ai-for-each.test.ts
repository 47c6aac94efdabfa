/**
 * The AI node with forEach, end to end on the embedded executor and the real AI SDK against a local OpenAI-compatible
 * fake: one call per element, the answer ledger (a retry asks only what is unfinished), onItemError, cancel.
 */
import { describe, expect, it } from "vitest";
import { enqueue, getRun, insertUpload, insertWorkflow, runToEnd } from "@/test/runs/helpers";
import { prompt } from "@/test/support/fake-openai";
import { accountWithAi, aiItems, aiTestBed, cancel, itemOf, peopleRows, perRowGraph, retry } from "./helpers";
import { POST as sendHandler } from "@/app/api/workflows/runs/[runId]/send/route";
import { POST as enqueueHandler } from "@/app/api/workflows/[workflowId]/run/route";
import { call } from "@/test/support/http";
import { leanHeapFlags, leanHeapPolicy, leanHeapState } from "@/lib/ai/lean-heap";

const bed = aiTestBed({ backoffMs: 5, maxBackoffMs: 10, stopCheckMs: 50, cancelGraceMs: 100 });

describe("AI forEach", () => {
  it("asks once per row, adds the declared fields to each item, and an OUTPUT sends one email per item", async () => {
    const { id, token } = await accountWithAi(bed.ai.url);
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(5));
    const before = bed.ai.requests.length;
    const run = await runToEnd(bed.executor, token, await insertWorkflow(id, perRowGraph(uploadId)));
    expect(run.status).toBe("SUCCESS");
    expect(bed.ai.requests.length - before).toBe(5);
    expect(run.nodes.ai.output.items[2]).toEqual({ name: "P2", email: "p2@example.com", greeting: "Hi P2" });
    expect(run.nodes.ai.output).toMatchObject({ count: 5, failed: 0, usage: { calls: 5, inputTokens: 50, outputTokens: 50, costUsd: null } });
    const sent = bed.resend.emails().filter((e) => e.to[0].endsWith("@example.com") && e.text?.startsWith("Hi P"));
    expect(sent.map((e) => e.text).sort()).toEqual(["Hi P0", "Hi P1", "Hi P2", "Hi P3", "Hi P4"]);
  });

  it("turns scalar elements into { value, ...fields }", async () => {
    const { id, token } = await accountWithAi(bed.ai.url);
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(1));
    bed.ai.answer((req) => (prompt(req).startsWith("List") ? { names: ["Ann", "Bob"] } : { greeting: `Hi ${itemOf(prompt(req))}` }));
    const graph = perRowGraph(uploadId, { forEach: "{{names.names}}", prompt: "Greet [item {{item}}]" });
    graph.nodes.splice(2, 0, { id: "names", type: "AI", data: { prompt: "List two names", output: [{ name: "names", type: "array" }] } });
    graph.edges = [
      { source: "t", target: "src" },
      { source: "src", target: "names" },
      { source: "names", target: "ai" },
      { source: "ai", target: "out" },
    ];
    (graph.nodes[4].data as Record<string, unknown>).to = "{{item.value}}@example.com";
    const run = await runToEnd(bed.executor, token, await insertWorkflow(id, graph));
    expect(run.status).toBe("SUCCESS");
    expect(run.nodes.names.output).toEqual({ names: ["Ann", "Bob"], usage: { calls: 1, inputTokens: 10, outputTokens: 10, costUsd: null } });
    expect(run.nodes.ai.output.items).toEqual([
      { value: "Ann", greeting: "Hi Ann" },
      { value: "Bob", greeting: "Hi Bob" },
    ]);
  });

  it("onItemError skip: a refused item is left out and counted in failed", async () => {
    const { id, token } = await accountWithAi(bed.ai.url);
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(4));
    bed.ai.refuse((req) => itemOf(prompt(req)) === "P1");
    const run = await runToEnd(bed.executor, token, await insertWorkflow(id, perRowGraph(uploadId, { onItemError: "skip" })));
    expect(run.status).toBe("SUCCESS");
    expect(run.nodes.ai.output).toMatchObject({ count: 3, failed: 1 });
    expect(run.nodes.ai.output.items.map((i: { name: string }) => i.name)).toEqual(["P0", "P2", "P3"]);

    const page = await aiItems(token, run.runId, "ai");
    expect(page.status).toBe(200);
    expect(page.body.counts).toEqual({ pending: 0, done: 3, failed: 1, skipped: 0 });
    expect(page.body.total).toBe(4);
    // The list the items are elements of, so a view can show each element beside its answer.
    expect(page.body.forEach).toBe("{{src.rows}}");
    expect(page.body.items[0]).toEqual({ index: 0, status: "done", output: { greeting: "Hi P0" }, error: null, inputTokens: 10, outputTokens: 10, reused: false });
    const failed = await aiItems(token, run.runId, "ai", "?status=failed&limit=1");
    expect(failed.body.items).toEqual([expect.objectContaining({ index: 1, status: "failed", error: expect.stringMatching(/^Item 1: .*HTTP 400/) })]);
    expect(failed.body.total).toBe(1);
    expect((await aiItems(token, run.runId, "out")).status).toBe(404);
    expect((await aiItems(token, run.runId, "ai", "?limit=1001")).status).toBe(422);
    const stranger = await accountWithAi(bed.ai.url);
    expect((await aiItems(stranger.token, run.runId, "ai")).status).toBe(404);
  });

  it("the send of a preview lists the preview's items for the AI node it copied, asking the model nothing", async () => {
    const { id, token } = await accountWithAi(bed.ai.url);
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(3));
    const workflowId = await insertWorkflow(id, perRowGraph(uploadId));
    const previewed = await call(enqueueHandler, { method: "POST", path: `/api/workflows/${workflowId}/run`, token, params: { workflowId }, json: { mode: "preview" } });
    expect(previewed.status).toBe(202);
    await bed.executor.idle();
    const asked = bed.ai.requests.length;
    const sent = await call(sendHandler, { method: "POST", path: `/api/workflows/runs/${previewed.body.runId}/send`, token, params: { runId: previewed.body.runId } });
    expect(sent.status).toBe(202);
    await bed.executor.idle();
    expect((await getRun(token, sent.body.runId)).body.status).toBe("SUCCESS");
    expect(bed.ai.requests.length).toBe(asked);
    const page = await aiItems(token, sent.body.runId, "ai");
    expect(page.status).toBe(200);
    expect(page.body.counts).toEqual({ pending: 0, done: 3, failed: 0, skipped: 0 });
    expect(page.body.items.map((i: { output: unknown }) => i.output)).toEqual([{ greeting: "Hi P0" }, { greeting: "Hi P1" }, { greeting: "Hi P2" }]);
  });

  it("onItemError fail: the node fails naming the item; a retry asks only the unfinished items", async () => {
    const { id, token } = await accountWithAi(bed.ai.url);
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(250));
    bed.ai.refuse((req) => itemOf(prompt(req)) === "P120");
    const workflowId = await insertWorkflow(id, perRowGraph(uploadId, { prompt: `Greet [item {{item.name}}] ${uploadId}` }));
    const failed = await runToEnd(bed.executor, token, workflowId);
    expect(failed.status).toBe("FAILED");
    expect(failed.nodes.ai.error).toMatch(/^Item 120 failed: The AI provider answered with an error \(HTTP 400, content_policy_violation\)/);
    expect(failed.nodes.out.status).toBe("SKIPPED");
    const mine = () => bed.ai.requests.filter((r) => prompt(r).includes(uploadId));
    const askedFirst = new Map<string, number>();
    for (const r of mine()) askedFirst.set(itemOf(prompt(r)), (askedFirst.get(itemOf(prompt(r))) ?? 0) + 1);
    expect([...askedFirst.values()].every((n) => n === 1)).toBe(true);

    bed.ai.refuse(null);
    const before = mine().length;
    const again = await retry(token, failed.runId);
    expect(again.status).toBe(202);
    await bed.executor.idle();
    const run = (await getRun(token, again.body.runId)).body;
    expect(run.status).toBe("SUCCESS");
    expect(run.nodes.ai.output.count).toBe(250);
    const second = mine().slice(before).map((r) => itemOf(prompt(r)));
    // Only the refused item and those never asked (the node stopped) were asked again: nothing answered twice.
    expect(second).toContain("P120");
    expect(second.filter((name) => askedFirst.has(name) && name !== "P120")).toEqual([]);
    expect(second.length + askedFirst.size - 1).toBe(250);
  });

  it("a cancel during a slow call interrupts it and the run ends Cancelled", async () => {
    const { id, token } = await accountWithAi(bed.ai.url);
    const uploadId = await insertUpload(id, ["name", "email"], peopleRows(3));
    bed.ai.hangNext(100);
    const res = await enqueue(token, await insertWorkflow(id, perRowGraph(uploadId)));
    const before = bed.ai.requests.length;
    for (let i = 0; i < 400 && bed.ai.requests.length === before; i++) await new Promise((r) => setTimeout(r, 25));
    expect(bed.ai.requests.length).toBeGreaterThan(before);
    try {
      // The node's RUNNING row may be written a moment after its first call left (the store batches writes).
      let running = (await getRun(token, res.body.runId)).body;
      for (let i = 0; i < 200 && running.nodes.ai.status !== "RUNNING"; i++) {
        await new Promise((r) => setTimeout(r, 25));
        running = (await getRun(token, res.body.runId)).body;
      }
      expect(running.nodes.ai).toMatchObject({ status: "RUNNING", progress: { done: 0, total: 3 } });
      expect((await cancel(token, res.body.runId)).status).toBe(202);
      await bed.executor.idle();
      const run = (await getRun(token, res.body.runId)).body;
      expect(run.status).toBe("FAILED");
      expect(run.error).toBe("Cancelled");
      expect(run.nodes.ai.status).not.toBe("FAILED");
    } finally {
      bed.ai.hangNext(0);
    }
  });
  it("a node of many items keeps V8's old generation lean while its calls run; a small one leaves the process's factor", async () => {
    const { id, token } = await accountWithAi(bed.ai.url);
    const policy = { ...leanHeapPolicy };
    const set = leanHeapFlags.set;
    const flags: string[] = [];
    leanHeapFlags.set = (flag) => void flags.push(flag);
    Object.assign(leanHeapPolicy, { minItems: 4, lingerMs: 0 });
    const lean: boolean[] = [];
    bed.ai.answer((req) => {
      lean.push(leanHeapState().lean);
      return { greeting: `Hi ${itemOf(prompt(req))}` };
    });
    try {
      const big = await runToEnd(bed.executor, token, await insertWorkflow(id, perRowGraph(await insertUpload(id, ["name", "email"], peopleRows(4)))));
      expect(big.status).toBe("SUCCESS");
      expect(lean).toEqual([true, true, true, true]);
      for (let i = 0; i < 100 && leanHeapState().lean; i++) await new Promise((r) => setTimeout(r, 10));
      expect(flags).toEqual(["--heap-growing-percent=30", "--heap-growing-percent=0"]);
      lean.length = 0;
      const small = await runToEnd(bed.executor, token, await insertWorkflow(id, perRowGraph(await insertUpload(id, ["name", "email"], peopleRows(3)))));
      expect(small.status).toBe("SUCCESS");
      expect(lean).toEqual([false, false, false]);
      expect(flags).toHaveLength(2);
    } finally {
      Object.assign(leanHeapPolicy, policy);
      leanHeapFlags.set = set;
    }
  });
});
