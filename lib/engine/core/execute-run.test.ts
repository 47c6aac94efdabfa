import { describe, expect, it } from "vitest";
import type { Graph, NodeType } from "@/lib/graph/schema";
import { unavailablePorts } from "@/lib/nodes/__tests__/fake-runtime";
import { nodeExecutors } from "@/lib/nodes/registry";
import { NodeError, type NodeExecutor } from "@/lib/nodes/types";
import { claimAndExecute, executeRun, inlineStep, type EngineDeps } from "./execute-run";
import { MemoryRunStore } from "./memory-run-store";
import { RunLostError } from "./run-stop";

/**
 * The engine's rules against MemoryRunStore: no database, each test a few milliseconds. The PostgreSQL store is covered
 * by the integration tests (test/runs) and the fault suite; these pin down what the engine itself decides.
 */

type Calls = { executed: string[]; batches: string[] };

/** Executors that record what ran: DATA_SOURCE outputs fixed rows, OUTPUT counts its items in batches of 2. */
function harness(options: { rows?: Record<string, unknown>[]; failing?: string[]; batchedOutput?: boolean; onBatch?: (batch: number) => unknown } = {}) {
  const calls: Calls = { executed: [], batches: [] };
  const rows = options.rows ?? [{ email: "a@x.test", plan: "pro" }, { email: "b@x.test", plan: "free" }, { email: "c@x.test", plan: "pro" }];
  const fails = (id: string) => {
    if (options.failing?.includes(id)) throw new NodeError(`${id} broke`);
  };
  const executors = {
    ...nodeExecutors,
    TRIGGER: { async execute(node, rt) { calls.executed.push(node.id); return nodeExecutors.TRIGGER.execute(node, rt); } },
    DATA_SOURCE: {
      async execute(node) {
        calls.executed.push(node.id);
        fails(node.id);
        return { kind: "done", output: { rows, rowCount: rows.length, columns: ["email", "plan"] }, itemsOut: rows.length };
      },
    },
    FILTER: { async execute(node, rt) { calls.executed.push(node.id); fails(node.id); return nodeExecutors.FILTER.execute(node, rt); } },
    OUTPUT: {
      async execute(node, rt) {
        calls.executed.push(node.id);
        fails(node.id);
        const items = (rt.nodeOutputs()[String(node.data.forEach).replace(/[{}]/g, "").split(".")[0]]?.items as unknown[]) ?? [];
        if (options.batchedOutput) return { kind: "batched", batches: Math.ceil(items.length / 2) || 1 };
        return { kind: "done", output: { emailsSent: items.length, suppressed: 0, duplicates: 0 }, itemsOut: items.length };
      },
      async runBatch(node, _rt, batch) {
        calls.batches.push(`${node.id}:${batch}`);
        await options.onBatch?.(batch);
      },
      async complete(node) {
        return { kind: "done", output: { emailsSent: calls.batches.filter((b) => b.startsWith(`${node.id}:`)).length }, itemsOut: 0 };
      },
    },
  } as { [T in NodeType]: NodeExecutor<T> };
  const store = new MemoryRunStore();
  const wakes: string[] = [];
  const deps: EngineDeps = { store, ports: unavailablePorts, wake: async (id) => void wakes.push(id), executors };
  return { store, deps, calls, wakes };
}

const node = (id: string, type: NodeType, data: Record<string, unknown> = {}) => ({ id, type, data }) as Graph["nodes"][number];
const edge = (source: string, target: string, condition?: string) => ({ source, target, ...(condition ? { condition } : {}) });

/** trigger → source → filter (plan = "pro") → output, the spec's pipeline. */
const pipeline: Graph = {
  nodes: [
    node("start", "TRIGGER"),
    node("source", "DATA_SOURCE", { uploadId: "upl_1" }),
    node("pros", "FILTER", { source: "{{source.rows}}", expr: 'item.plan == "pro"' }),
    node("send", "OUTPUT", { forEach: "{{pros.items}}", to: "{{item.email}}", subject: "Hi", body: "Hello" }),
  ],
  edges: [edge("start", "source"), edge("source", "pros"), edge("pros", "send")],
};

let ids = 0;
function enqueue(store: MemoryRunStore, graph: Graph, extra: Partial<Parameters<MemoryRunStore["enqueue"]>[0]> = {}, reused?: Record<string, Record<string, unknown>>) {
  const runId = `run_${++ids}`;
  store.enqueue({ runId, workflowId: "wf_1", accountId: "acc_1", graph, ...extra }, reused);
  return runId;
}

const statuses = (store: MemoryRunStore, runId: string) => Object.fromEntries([...store.get(runId).nodes].map(([id, n]) => [id, n.status]));

describe("the engine on an in-memory run store", () => {
  it("runs the pipeline in order and counts the result", async () => {
    const { store, deps, calls, wakes } = harness();
    const runId = enqueue(store, pipeline);
    expect(await claimAndExecute(inlineStep, deps, "wf_1")).toBe(runId);
    const run = store.get(runId);
    expect(run.status).toBe("SUCCESS");
    expect(calls.executed).toEqual(["start", "source", "pros", "send"]);
    expect(statuses(store, runId)).toEqual({ start: "SUCCESS", source: "SUCCESS", pros: "SUCCESS", send: "SUCCESS" });
    expect(run.result).toEqual({ emailsSent: 2, filteredOut: 1, totalRows: 3, suppressed: 0, duplicates: 0 });
    expect(run.logs.at(-1)?.message).toBe("Run succeeded: 2 email(s) sent, 1 row(s) filtered out, 3 row(s) read");
    expect(wakes).toEqual(["wf_1"]);
  });

  it("claims a workflow's runs in FIFO order, one at a time", async () => {
    const { store, deps } = harness();
    const first = enqueue(store, pipeline);
    const second = enqueue(store, pipeline);
    store.get(first).status = "RUNNING";
    expect(await store.claimNext("wf_1")).toBeNull(); // busy: the first is RUNNING
    store.get(first).status = "PENDING";
    expect(await claimAndExecute(inlineStep, deps, "wf_1")).toBe(first);
    expect(store.get(second).status).toBe("PENDING");
    expect(await claimAndExecute(inlineStep, deps, "wf_1")).toBe(second);
    expect(await claimAndExecute(inlineStep, deps, "wf_1")).toBeNull();
  });

  it("skips the target of a false condition and everything only it feeds; a join with one live input runs", async () => {
    const { store, deps, calls } = harness();
    const graph: Graph = {
      nodes: [
        node("start", "TRIGGER"),
        node("source", "DATA_SOURCE", { uploadId: "u" }),
        node("big", "FILTER", { source: "{{source.rows}}", expr: "true" }),
        node("never", "FILTER", { source: "{{source.rows}}", expr: "true" }),
        node("after_never", "FILTER", { source: "{{never.items}}", expr: "true" }),
        node("send", "OUTPUT", { forEach: "{{big.items}}", to: "{{item.email}}", subject: "s", body: "b" }),
      ],
      edges: [
        edge("start", "source"),
        edge("source", "big", "source.rowCount > 2"),
        edge("source", "never", "source.rowCount > 100"),
        edge("never", "after_never"),
        edge("big", "send"),
        edge("after_never", "send"),
      ],
    };
    const runId = enqueue(store, graph);
    await claimAndExecute(inlineStep, deps, "wf_1");
    expect(statuses(store, runId)).toEqual({ start: "SUCCESS", source: "SUCCESS", big: "SUCCESS", never: "SKIPPED", after_never: "SKIPPED", send: "SUCCESS" });
    expect(calls.executed).not.toContain("never");
    expect(store.get(runId).status).toBe("SUCCESS");
  });

  it("stops at a failed node: the rest is SKIPPED and the run's error names the failed node", async () => {
    const { store, deps, calls } = harness({ failing: ["pros"] });
    const runId = enqueue(store, pipeline);
    await claimAndExecute(inlineStep, deps, "wf_1");
    const run = store.get(runId);
    expect(run.status).toBe("FAILED");
    expect(run.error).toBe('Node "pros" failed: pros broke');
    expect(statuses(store, runId)).toEqual({ start: "SUCCESS", source: "SUCCESS", pros: "FAILED", send: "SKIPPED" });
    expect(calls.executed).not.toContain("send");
  });

  it("a retry reuses the nodes that succeeded: they are not executed again, and their edge conditions still apply", async () => {
    const { store, deps, calls } = harness();
    const graph: Graph = { ...pipeline, edges: [edge("start", "source"), edge("source", "pros", "source.rowCount == 3"), edge("pros", "send")] };
    const rows = [{ email: "a@x.test", plan: "pro" }, { email: "b@x.test", plan: "free" }, { email: "c@x.test", plan: "pro" }];
    const runId = enqueue(store, graph, {}, {
      start: {},
      source: { rows, rowCount: 3, columns: ["email", "plan"] },
    });
    await claimAndExecute(inlineStep, deps, "wf_1");
    expect(calls.executed).toEqual(["pros", "send"]);
    expect(store.get(runId).status).toBe("SUCCESS");
    // Reused nodes count their rows; a reused OUTPUT would not count its emails again (nothing was sent by this run).
    expect(store.get(runId).result).toMatchObject({ totalRows: 3, emailsSent: 2 });
  });

  it("a reused node whose edge condition is false still skips its target", async () => {
    const { store, deps, calls } = harness();
    const graph: Graph = { ...pipeline, edges: [edge("start", "source"), edge("source", "pros", "source.rowCount > 10"), edge("pros", "send")] };
    const runId = enqueue(store, graph, {}, { start: {}, source: { rows: [], rowCount: 3, columns: [] } });
    await claimAndExecute(inlineStep, deps, "wf_1");
    expect(calls.executed).toEqual([]);
    expect(statuses(store, runId)).toMatchObject({ pros: "SKIPPED", send: "SKIPPED" });
    expect(store.get(runId).status).toBe("SUCCESS");
  });

  it("resumes an interrupted run from its first unfinished node", async () => {
    const { store, deps, calls } = harness();
    const runId = enqueue(store, pipeline);
    await store.claimNext("wf_1");
    await store.startRun(await store.loadRun(runId) as never);
    await store.nodeSucceeded(runId, "start", { output: {}, logMessages: ["ok"] });
    await store.startNode(runId, "source"); // RUNNING when the process died: it runs again
    await executeRun(inlineStep, deps, runId);
    expect(calls.executed).toEqual(["source", "pros", "send"]);
    expect(store.get(runId).logs.map((l) => l.message)).toContain("Run resumed after an interruption");
    expect(store.get(runId).status).toBe("SUCCESS");
  });

  it("a cancel asked before the next node finishes the run as cancelled; the next run starts", async () => {
    const { store, deps, calls, wakes } = harness();
    const runId = enqueue(store, pipeline);
    const executors = deps.executors!;
    const cancelling: EngineDeps = {
      ...deps,
      executors: {
        ...executors,
        DATA_SOURCE: {
          async execute(n, rt) {
            store.requestCancel(runId); // a person presses Cancel while the source reads
            return executors.DATA_SOURCE.execute(n, rt);
          },
        },
      },
    };
    await claimAndExecute(inlineStep, cancelling, "wf_1");
    const run = store.get(runId);
    expect(run.status).toBe("FAILED");
    expect(run.error).toBe("Cancelled");
    expect(statuses(store, runId)).toEqual({ start: "SUCCESS", source: "SUCCESS", pros: "SKIPPED", send: "SKIPPED" });
    expect(calls.executed).not.toContain("pros");
    expect(run.logs.at(-1)?.message).toBe("Run cancelled: 0 email(s) sent before it stopped");
    expect(wakes).toEqual(["wf_1"]);
  });

  it("sends a batched node's batches in groups of eight: a group starts once the previous one has ended", async () => {
    const rows = Array.from({ length: 40 }, (_, i) => ({ email: `u${i}@x.test`, plan: "pro" }));
    let underWay = 0;
    let most = 0;
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    const startedWhileFirstHeld: number[] = [];
    let firstDone = false;
    const { store, deps, calls } = harness({
      rows,
      batchedOutput: true,
      onBatch: async (batch) => {
        underWay++;
        most = Math.max(most, underWay);
        if (!firstDone && batch !== 0) startedWhileFirstHeld.push(batch);
        if (batch === 0) {
          await firstHeld;
          firstDone = true;
        } else await new Promise((resolve) => setImmediate(resolve));
        // The slow first batch lets go once the rest of its group has ended.
        if (batch === 7) setImmediate(releaseFirst);
        underWay--;
      },
    });
    const runId = enqueue(store, pipeline);
    await claimAndExecute(inlineStep, deps, "wf_1");
    expect(calls.batches).toHaveLength(20);
    expect(most).toBe(8);
    // Batch 8 waited for the slow batch 0: only its own group started while it was held.
    expect(startedWhileFirstHeld).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(store.get(runId).status).toBe("SUCCESS");
  });

  it("starts no group once a cancel is seen, and lets the batches under way finish", async () => {
    const rows = Array.from({ length: 40 }, (_, i) => ({ email: `u${i}@x.test`, plan: "pro" }));
    let runId = "";
    let cancelled = false;
    const startedAfterCancel: number[] = [];
    const finished: number[] = [];
    const { store, deps, calls } = harness({
      rows,
      batchedOutput: true,
      onBatch: async (batch) => {
        if (cancelled) startedAfterCancel.push(batch);
        if (batch === 9) {
          cancelled = true;
          store.requestCancel(runId);
        }
        await new Promise((resolve) => setImmediate(resolve));
        finished.push(batch);
      },
    });
    runId = enqueue(store, pipeline);
    await claimAndExecute(inlineStep, deps, "wf_1");
    // 20 batches of 2 in groups of 8; batch 9 asks to cancel: the batches of its group finish, the third never starts.
    expect(startedAfterCancel.every((batch) => batch < 16)).toBe(true);
    expect(calls.batches.length).toBeGreaterThanOrEqual(10);
    expect(calls.batches.length).toBeLessThanOrEqual(16);
    expect(calls.batches).toEqual(Array.from({ length: calls.batches.length }, (_, i) => `send:${i}`));
    expect(finished.sort((a, b) => a - b)).toEqual(Array.from({ length: calls.batches.length }, (_, i) => i));
    expect(store.get(runId).status).toBe("FAILED");
    expect(store.get(runId).error).toBe("Cancelled");
    expect(statuses(store, runId).send).toBe("SKIPPED");
  });

  it("a batch's failure sentence is written again once the batches under way have ended", async () => {
    const rows = Array.from({ length: 12 }, (_, i) => ({ email: `u${i}@x.test`, plan: "pro" }));
    let sent = 0;
    const { store, deps } = harness({ rows, batchedOutput: true });
    const output = deps.executors!.OUTPUT;
    deps.executors = {
      ...deps.executors!,
      OUTPUT: {
        ...output,
        async runBatch(_node, _rt, batch) {
          // Batch 2 is refused while its siblings are still sending: its sentence counts what was sent so far.
          if (batch === 2) throw new NodeError(`quota used up: ${sent} of 6 sent`);
          await new Promise((resolve) => setImmediate(resolve));
          sent++;
        },
        settleFailure: async (_node, _rt, sentence) => sentence.replace(/\d+ of 6/, `${sent} of 6`),
      },
    };
    const runId = enqueue(store, pipeline);
    await claimAndExecute(inlineStep, deps, "wf_1");
    expect(sent).toBe(5);
    expect(store.get(runId).nodes.get("send")?.error).toBe("quota used up: 5 of 6 sent");
    expect(store.get(runId).status).toBe("FAILED");
    expect(store.get(runId).error).toContain("quota used up: 5 of 6 sent");
  });

  it("completes a batched node after all its batches", async () => {
    const rows = Array.from({ length: 9 }, (_, i) => ({ email: `u${i}@x.test`, plan: "pro" }));
    const { store, deps, calls } = harness({ rows, batchedOutput: true });
    const runId = enqueue(store, pipeline);
    await claimAndExecute(inlineStep, deps, "wf_1");
    expect(calls.batches).toHaveLength(5);
    expect(store.get(runId).nodes.get("send")?.output).toEqual({ emailsSent: 5 });
    expect(store.get(runId).status).toBe("SUCCESS");
  });

  it("hands a run back on SIGTERM: it stays RUNNING, released, not finalized", async () => {
    const { store, deps, wakes } = harness();
    const runId = enqueue(store, pipeline);
    store.handingBack = true;
    await claimAndExecute(inlineStep, deps, "wf_1");
    const run = store.get(runId);
    expect(run.status).toBe("RUNNING");
    expect(run.logs.at(-1)?.message).toBe("Handed back");
    expect(wakes).toEqual([]);
  });

  it("a preview with `until` executes only that node and its ancestors", async () => {
    const { store, deps, calls } = harness();
    const runId = enqueue(store, pipeline, { mode: "preview", untilNodeId: "pros" });
    await claimAndExecute(inlineStep, deps, "wf_1");
    expect(calls.executed).toEqual(["start", "source", "pros"]);
    expect(statuses(store, runId).send).toBe("SKIPPED");
    expect(store.get(runId).status).toBe("SUCCESS");
    expect(store.get(runId).result).toMatchObject({ emailsPlanned: 0 });
  });

  it("stops executing a run another process took over", async () => {
    const { store, deps, calls } = harness();
    const runId = enqueue(store, pipeline);
    await store.claimNext("wf_1");
    store.lost.add(runId);
    // Not just claimed by this call: the first node's guard beats, learns the run is gone, and stops.
    await expect(executeRun(inlineStep, deps, runId)).rejects.toBeInstanceOf(RunLostError);
    expect(calls.executed).toEqual([]);
    expect(store.get(runId).status).toBe("RUNNING");
  });

  it("an unexpected error fails the node with a sentence, not the error's text", async () => {
    const { store, deps } = harness();
    const runId = enqueue(store, pipeline);
    const crashing: EngineDeps = {
      ...deps,
      executors: { ...deps.executors!, FILTER: { execute: async () => { throw new TypeError("secret internals"); } } },
    };
    await claimAndExecute(inlineStep, crashing, "wf_1");
    expect(store.get(runId).nodes.get("pros")?.error).toBe(
      "An unexpected error stopped this node (it has been logged for the operators); run the workflow again.",
    );
    expect(store.get(runId).status).toBe("FAILED");
  });
});
