// POST …/run with an Idempotency-Key (CONTRACT: the same key within 24 h returns the same run): replay, another
// workflow (409), concurrent requests with one key (one run), an expired key (a new run, the key replaced), a missing
// workflow (404, no key kept), keys of other accounts and scopes apart. lib/engine/pg/enqueue-run.ts.
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { execRows, getDb } from "@/db/client";
import { newId } from "@/lib/ids";
import { enqueueRun } from "@/lib/engine/pg/enqueue-run";
import { createTestAccount } from "@/test/support/accounts";
import { enqueue, insertWorkflow, trigger } from "./helpers";

const graph = { nodes: [trigger], edges: [] };

async function runIds(workflowId: string): Promise<string[]> {
  const rows = await execRows<{ id: string }>(await getDb(), sql`select id from runs where workflow_id = ${workflowId} order by seq`);
  return rows.map((r) => r.id);
}

async function keyRow(accountId: string, key: string, scope = "run") {
  const [row] = await execRows<{ resource_id: string; created_at: string | Date }>(
    await getDb(),
    sql`select resource_id, created_at from idempotency_keys where account_id = ${accountId} and scope = ${scope} and key = ${key}`,
  );
  return row;
}

describe("enqueue with an Idempotency-Key", () => {
  it("answers the same run, with its current status, for the same key; another key is another run", async () => {
    const owner = await createTestAccount();
    const workflowId = await insertWorkflow(owner.id, graph);
    const first = await enqueue(owner.token, workflowId, { "Idempotency-Key": "k1" });
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ workflowId, status: "PENDING" });
    expect(first.headers.get("location")).toBe(`/api/workflows/runs/${first.body.runId}`);
    await (await getDb()).execute(sql`update runs set status = 'FAILED' where id = ${first.body.runId}`);
    const again = await enqueue(owner.token, workflowId, { "Idempotency-Key": "k1" });
    expect(again.status).toBe(202);
    expect(again.body).toEqual({ ...first.body, status: "FAILED" });
    const other = await enqueue(owner.token, workflowId, { "Idempotency-Key": "k2" });
    expect(other.body.runId).not.toBe(first.body.runId);
    expect(await runIds(workflowId)).toEqual([first.body.runId, other.body.runId]);
    expect((await keyRow(owner.id, "k1")).resource_id).toBe(first.body.runId);
  });

  it("answers 409 for the same key on another workflow, and runs nothing", async () => {
    const owner = await createTestAccount();
    const one = await insertWorkflow(owner.id, graph);
    const two = await insertWorkflow(owner.id, graph);
    expect((await enqueue(owner.token, one, { "Idempotency-Key": "shared" })).status).toBe(202);
    const clash = await enqueue(owner.token, two, { "Idempotency-Key": "shared" });
    expect(clash.status).toBe(409);
    expect(clash.body.code).toBe("conflict");
    expect(clash.headers.get("content-type")).toContain("application/problem+json");
    expect(await runIds(two)).toEqual([]);
  });

  it("makes one run for concurrent requests with one key, and answers it to all", async () => {
    const owner = await createTestAccount();
    const workflowId = await insertWorkflow(owner.id, graph);
    const answers = await Promise.all(Array.from({ length: 8 }, () => enqueue(owner.token, workflowId, { "Idempotency-Key": "burst" })));
    const statuses = answers.map((a) => a.status);
    // A request that lost the race three times in a row answers 409 "in progress"; every 202 names the one run.
    expect(statuses.every((s) => s === 202 || s === 409)).toBe(true);
    const ids = new Set(answers.filter((a) => a.status === 202).map((a) => a.body.runId));
    expect(ids.size).toBe(1);
    expect(await runIds(workflowId)).toEqual([...ids]);
  });

  it("starts a new run for a key older than 24 h, and the key then names it", async () => {
    const owner = await createTestAccount();
    const workflowId = await insertWorkflow(owner.id, graph);
    const first = await enqueue(owner.token, workflowId, { "Idempotency-Key": "old" });
    await (await getDb()).execute(
      sql`update idempotency_keys set created_at = now() - interval '25 hours' where account_id = ${owner.id} and key = 'old'`,
    );
    const second = await enqueue(owner.token, workflowId, { "Idempotency-Key": "old" });
    expect(second.status).toBe(202);
    expect(second.body.runId).not.toBe(first.body.runId);
    expect((await keyRow(owner.id, "old")).resource_id).toBe(second.body.runId);
    const third = await enqueue(owner.token, workflowId, { "Idempotency-Key": "old" });
    expect(third.body.runId).toBe(second.body.runId);
  });

  it("answers 404 for a workflow that is not the account's, and keeps no key", async () => {
    const owner = await createTestAccount();
    const other = await createTestAccount();
    const workflowId = await insertWorkflow(owner.id, graph);
    const res = await enqueue(other.token, workflowId, { "Idempotency-Key": "nope" });
    expect(res.status).toBe(404);
    expect(await keyRow(other.id, "nope")).toBeUndefined();
    expect((await enqueue(other.token, newId("wf"), { "Idempotency-Key": "nope" })).status).toBe(404);
    // The same key works for the owner (keys are per account).
    expect((await enqueue(owner.token, workflowId, { "Idempotency-Key": "nope" })).status).toBe(202);
  });

  it("keeps scopes apart, and a hook's key carries its trigger body into the run", async () => {
    const owner = await createTestAccount();
    const workflowId = await insertWorkflow(owner.id, graph);
    const viaHook = await enqueueRun(owner.id, workflowId, "same", { trigger: "hook", triggerBody: { a: 1 }, idempotencyScope: "hook:x" });
    const viaRun = await enqueue(owner.token, workflowId, { "Idempotency-Key": "same" });
    expect(viaRun.body.runId).not.toBe(viaHook.run.runId);
    const replay = await enqueueRun(owner.id, workflowId, "same", { trigger: "hook", triggerBody: { a: 2 }, idempotencyScope: "hook:x" });
    expect(replay.run.runId).toBe(viaHook.run.runId);
    const [row] = await execRows<{ trigger: string; trigger_body: unknown; mode: string }>(
      await getDb(),
      sql`select trigger, trigger_body, mode from runs where id = ${viaHook.run.runId}`,
    );
    expect(row).toEqual({ trigger: "hook", trigger_body: { a: 1 }, mode: "live" });
  });
});
