import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { getDb, getRunStateDb } from "@/db/client";
import { nodeResults, runLogs, runs } from "@/db/schema";
import { newId } from "@/lib/ids";
import { DEFERRED_RUNNING_MS, PgRunStore } from "@/lib/engine/pg/pg-run-store";
import { runMemory } from "@/lib/engine/pg/run-memory";
import { PROGRESS_INTERVAL_MS } from "@/lib/engine/pg-node-ports";
import { createTestAccount } from "@/test/support/accounts";
import { insertWorkflow, trigger, type TestGraph } from "./helpers";

/** PgRunStore's round-trip savings (issue 18) keep the rows a person and a resume see. */
async function claimedRun() {
  const { id } = await createTestAccount();
  const graph: TestGraph = {
    nodes: [trigger, { id: "f", type: "FILTER", data: { source: "{{t.body}}", expr: "true" } }],
    edges: [{ source: "t", target: "f" }],
  };
  const workflowId = await insertWorkflow(id, graph);
  const runId = newId("run");
  await (await getDb()).insert(runs).values({ id: runId, workflowId, accountId: id, workflowVersion: 3, graph });
  const store = new PgRunStore(await getRunStateDb());
  const claimed = await store.claimNext(workflowId);
  return { store, claimed, runId };
}

const nodeRow = async (runId: string, nodeId: string) =>
  (await (await getDb()).select().from(nodeResults).where(and(eq(nodeResults.runId, runId), eq(nodeResults.nodeId, nodeId))))[0];

describe("PgRunStore", () => {
  it("starts the run in the claim: a PENDING row per node and the first log line", async () => {
    const { claimed, runId } = await claimedRun();
    expect(claimed).toMatchObject({ runId, status: "RUNNING", started: true, version: 3, cancelRequested: false });
    expect((await nodeRow(runId, "t"))?.status).toBe("PENDING");
    expect((await nodeRow(runId, "f"))?.status).toBe("PENDING");
    const logs = await (await getDb()).select().from(runLogs).where(eq(runLogs.runId, runId));
    expect(logs.map((l) => l.message)).toEqual(["Run started (workflow version 3)"]);
  });

  it("folds a quick node's RUNNING write into its SUCCESS write, with its start time", async () => {
    const { store, runId } = await claimedRun();
    const before = Date.now();
    expect(await store.startNode(runId, "t", { deferrable: true })).toBeUndefined();
    expect((await nodeRow(runId, "t"))?.status).toBe("PENDING");
    await store.nodeSucceeded(runId, "t", { output: {}, logMessages: ["first", "second"] });
    const row = await nodeRow(runId, "t");
    expect(row?.status).toBe("SUCCESS");
    expect(row?.startedAt).not.toBeNull();
    expect(row!.startedAt!.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(row!.startedAt!.getTime()).toBeLessThanOrEqual(row!.completedAt!.getTime());
    const logs = await (await getDb()).select().from(runLogs).where(eq(runLogs.runId, runId)).orderBy(runLogs.id);
    expect(logs.map((l) => l.message).slice(-2)).toEqual(["first", "second"]);
  });

  it("writes RUNNING once a deferred node outlives the delay, and at once for a node with batches", async () => {
    const { store, runId } = await claimedRun();
    await store.startNode(runId, "t", { deferrable: true });
    await store.startNode(runId, "f");
    expect((await nodeRow(runId, "f"))?.status).toBe("RUNNING");
    await new Promise((resolve) => setTimeout(resolve, DEFERRED_RUNNING_MS + 300));
    expect((await nodeRow(runId, "t"))?.status).toBe("RUNNING");
    await store.nodeFailed(runId, "t", "broke");
    expect(await nodeRow(runId, "t")).toMatchObject({ status: "FAILED", error: "broke" });
  });

  it("reads a finished node from its row when the run was not just claimed here (a resume)", async () => {
    const { store, runId } = await claimedRun();
    await store.startNode(runId, "t", { deferrable: true });
    await store.nodeSucceeded(runId, "t", { output: { x: 1 }, logMessages: ["ok"] });
    const other = new PgRunStore(await getRunStateDb());
    expect(await other.startNode(runId, "t", { deferrable: true })).toMatchObject({ nodeId: "t", status: "SUCCESS" });
    expect(await other.startNode(runId, "f", { deferrable: true })).toBeUndefined();
    expect((await nodeRow(runId, "f"))?.status).toBe("RUNNING");
  });

  it("shares what the process remembers of a run between its stores, and forget drops all of it", async () => {
    const { store, runId } = await claimedRun();
    const memory = runMemory();
    const heartbeatAt = async () => (await (await getDb()).select({ at: runs.heartbeatAt }).from(runs).where(eq(runs.id, runId)))[0].at;
    // A store of its own (an Inngest step's): the claim's beat and stop check are known, so neither makes a statement.
    const other = new PgRunStore(await getRunStateDb());
    const claimedBeat = await heartbeatAt();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await other.heartbeat(runId, { skipWithinMs: 60_000 })).toBe(true);
    expect(await heartbeatAt()).toEqual(claimedBeat);
    await (await getDb()).update(runs).set({ cancelRequestedAt: new Date() }).where(eq(runs.id, runId));
    expect(await other.stopReason(runId)).toBeNull(); // the claim's answer, within the check interval
    expect(await other.stopReason(runId, { fresh: true })).toBe("cancel");
    // A beat that is due is written, and remembered as this process's own.
    expect(await other.heartbeat(runId)).toBe(true);
    expect((await heartbeatAt())!.getTime()).toBeGreaterThan(claimedBeat!.getTime());
    expect(memory.ownBeats.has(runId)).toBe(true);
    expect(memory.progressDue(runId, "f", PROGRESS_INTERVAL_MS)).toBe(true);
    expect(memory.progressDue(runId, "f", PROGRESS_INTERVAL_MS)).toBe(false);

    store.forget(runId);
    expect([memory.beatAt.has(runId), memory.ownBeats.has(runId), memory.stopChecks.has(runId), memory.progressAt.has(runId)]).toEqual([false, false, false, false]);
    expect(memory.progressDue(runId, "f", PROGRESS_INTERVAL_MS)).toBe(true);
    memory.forget(runId);
  });
});
