import { InngestTestEngine, mockCtx } from "@inngest/test";
import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { getDb } from "@/db/client";
import { runs } from "@/db/schema";
import { newId } from "@/lib/ids";
import { executeRunFunction } from "@/inngest/functions/execute-run";
import { functions } from "@/inngest/functions";
import { sweepRunsFunction } from "@/inngest/functions/sweep-runs";
import { createTestAccount } from "@/test/support/accounts";
import { getRun, insertUpload, insertWorkflow, trigger, type TestGraph } from "./helpers";

async function queuedRuns(count: number) {
  const { id, token } = await createTestAccount();
  const uploadId = await insertUpload(id, ["email", "rating"], [
    ["a@example.com", "5"],
    ["b@example.com", "1"],
  ]);
  const graph: TestGraph = {
    nodes: [
      trigger,
      { id: "src", type: "DATA_SOURCE", data: { uploadId } },
      { id: "f", type: "FILTER", data: { source: "{{src.rows}}", expr: "rating > 3" } },
      { id: "out", type: "OUTPUT", data: { forEach: "{{f.items}}", to: "{{item.email}}", subject: "s", body: "b" } },
    ],
    edges: [
      { source: "t", target: "src" },
      { source: "src", target: "f" },
      { source: "f", target: "out" },
    ],
  };
  const workflowId = await insertWorkflow(id, graph);
  const db = await getDb();
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const runId = newId("run");
    await db.insert(runs).values({ id: runId, workflowId, accountId: id, workflowVersion: 1, graph });
    ids.push(runId);
  }
  return { workflowId, ids, token };
}

describe("the Inngest function execute-run", () => {
  it("is served with the sweep, keyed by workflow for concurrency", () => {
    expect(functions.map((f) => f.id())).toEqual(expect.arrayContaining(["execute-run", "sweep-runs"]));
    expect(JSON.stringify(executeRunFunction["opts"])).toContain('"key":"event.data.workflowId","limit":1');
  });

  it("claims the oldest run of the woken workflow and runs every node as its own step", async () => {
    const { workflowId, ids, token } = await queuedRuns(2);
    const engine = new InngestTestEngine({
      function: executeRunFunction,
      events: [{ name: "flowmail/run.wake", data: { workflowId } }],
    });
    const { result } = await engine.execute();
    expect(result).toEqual({ runId: ids[0] });
    const run = (await getRun(token, ids[0])).body;
    expect(run.status).toBe("SUCCESS");
    expect(run.result).toEqual({ emailsSent: 1, filteredOut: 1, totalRows: 2, suppressed: 0, duplicates: 0 });
    const [second] = await (await getDb()).select().from(runs).where(eq(runs.id, ids[1]));
    expect(second.status).toBe("PENDING");
  });

  it("does nothing when the workflow is busy", async () => {
    const { workflowId, ids } = await queuedRuns(2);
    await (await getDb()).update(runs).set({ status: "RUNNING", heartbeatAt: new Date() }).where(eq(runs.id, ids[0]));
    const engine = new InngestTestEngine({ function: executeRunFunction, events: [{ name: "flowmail/run.wake", data: { workflowId } }] });
    const { result } = await engine.execute();
    expect(result).toEqual({ runId: null });
  });

  it("resumes a run when the sweep says its executor died", async () => {
    const { workflowId, ids, token } = await queuedRuns(1);
    await (await getDb()).update(runs).set({ status: "RUNNING", heartbeatAt: new Date() }).where(eq(runs.id, ids[0]));
    const engine = new InngestTestEngine({
      function: executeRunFunction,
      events: [{ name: "flowmail/run.wake", data: { workflowId, resumeRunId: ids[0] } }],
    });
    const { result } = await engine.execute();
    expect(result).toEqual({ runId: ids[0], resumed: true });
    expect((await getRun(token, ids[0])).body.status).toBe("SUCCESS");
  });

  it("stops a run whose cancel was asked at its next node: FAILED \"Cancelled\", unfinished nodes SKIPPED", async () => {
    const { workflowId, ids, token } = await queuedRuns(1);
    await (await getDb()).update(runs).set({ cancelRequestedAt: new Date() }).where(eq(runs.id, ids[0]));
    const engine = new InngestTestEngine({ function: executeRunFunction, events: [{ name: "flowmail/run.wake", data: { workflowId } }] });
    await engine.execute();
    const run = (await getRun(token, ids[0])).body;
    expect(run).toMatchObject({ status: "FAILED", error: "Cancelled" });
    expect(Object.values(run.nodes).map((n) => (n as { status: string }).status)).toEqual(["SKIPPED", "SKIPPED", "SKIPPED", "SKIPPED"]);
  });

  it("executes only the `until` node and its ancestors of a preview", async () => {
    const { workflowId, ids, token } = await queuedRuns(1);
    await (await getDb()).update(runs).set({ mode: "preview", untilNodeId: "f" }).where(eq(runs.id, ids[0]));
    const engine = new InngestTestEngine({ function: executeRunFunction, events: [{ name: "flowmail/run.wake", data: { workflowId } }] });
    await engine.execute();
    const run = (await getRun(token, ids[0])).body;
    expect(run.status).toBe("SUCCESS");
    expect(Object.fromEntries(Object.entries(run.nodes).map(([id, n]) => [id, (n as { status: string }).status]))).toEqual({
      t: "SUCCESS", src: "SUCCESS", f: "SUCCESS", out: "SKIPPED",
    });
  });

  it("sweeps: sends a wake-up for each workflow with PENDING runs and none RUNNING", async () => {
    const { workflowId } = await queuedRuns(1);
    const sendEvent = vi.fn(async () => ({ ids: [] as string[] }));
    const engine = new InngestTestEngine({
      function: sweepRunsFunction,
      // No Inngest server here: record the events instead of sending them.
      transformCtx: (raw) => {
        const ctx = mockCtx(raw);
        (ctx.step as unknown as { sendEvent: typeof sendEvent }).sendEvent = sendEvent;
        return ctx;
      },
    });
    const { result } = await engine.execute();
    expect((result as { woken: number }).woken).toBeGreaterThanOrEqual(1);
    const events = (sendEvent.mock.calls[0] as unknown as [string, { name: string; data: { workflowId: string } }[]])[1];
    expect(events.every((e) => e.name === "flowmail/run.wake")).toBe(true);
    expect(events.map((e) => e.data.workflowId)).toContain(workflowId);
  });
});
