/**
 * A key confined to some workflows: on every route that names a workflow or a run, another workflow of the same
 * account and its runs answer 404 (as another account's would), lists hide them, and the key cannot create workflows.
 * Webhooks: such a key registers them only for its workflows (account-wide or another workflow's: 403), and sees,
 * deletes and reads the deliveries of those only (others answer 404).
 */
import { beforeAll, describe, expect, it } from "vitest";
import * as accountRunsRoute from "@/app/api/runs/route";
import * as workflowsRoute from "@/app/api/workflows/route";
import * as duplicateRoute from "@/app/api/workflows/[workflowId]/duplicate/route";
import * as webhooksRoute from "@/app/api/webhooks/route";
import * as webhookRoute from "@/app/api/webhooks/[webhookId]/route";
import * as deliveriesRoute from "@/app/api/webhooks/[webhookId]/deliveries/route";
import { apiKeyScopes } from "@/lib/schemas/api-keys";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";
import { emailEveryRowGraph, enqueue, getRun, insertUpload, insertWorkflow } from "@/test/runs/helpers";
import { authenticatedOperations, concretePath, createKey, handlerOf } from "./helpers";

type Account = Awaited<ReturnType<typeof createTestAccount>>;
let alice: Account;
let mine: { workflowId: string; runId: string };
let other: { workflowId: string; runId: string };
let confinedKey: string;
let openKey: string;

const workflowScoped = () =>
  authenticatedOperations().filter((op) => op.scope !== "person" && /:(workflowId|runId)\b/.test(op.path));

beforeAll(async () => {
  alice = await createTestAccount();
  const uploadId = await insertUpload(alice.id, ["email"], [["a@example.com"]]);
  const make = async (name: string) => {
    const workflowId = await insertWorkflow(alice.id, emailEveryRowGraph(uploadId), name);
    const run = await enqueue(alice.token, workflowId);
    expect(run.status).toBe(202);
    return { workflowId, runId: run.body.runId as string };
  };
  mine = await make("Mine");
  other = await make("Other secret");
  confinedKey = (await createKey(alice.token, { scopes: [...apiKeyScopes], workflowIds: [mine.workflowId] })).key;
  openKey = (await createKey(alice.token, { scopes: [...apiKeyScopes] })).key;
});

const values = (ids: { workflowId: string; runId: string }) => ({
  ...ids,
  nodeId: "src",
  hookId: "hook_unknownunknownunknown1",
  version: "1",
});

describe("a key confined to some workflows", () => {
  it("gets 404 for another workflow and its runs on every route that names one", async () => {
    const routes = workflowScoped();
    expect(routes.length).toBeGreaterThanOrEqual(15);
    for (const op of routes) {
      const { path, params } = concretePath(op, values(other));
      const res = await call(await handlerOf(op), { method: op.method.toUpperCase(), path, params, token: confinedKey });
      expect(res.status, `${op.method} ${op.path}: ${res.text}`).toBe(op.workflowCreating ? 403 : 404);
      expect(res.text, op.path).not.toContain("Other secret");
    }
    // The other workflow and its run are untouched (a DELETE or cancel above did nothing).
    expect((await getRun(alice.token, other.runId)).status).toBe(200);
    const list = await call(workflowsRoute.GET, { path: "/api/workflows", token: alice.token });
    expect(list.body.items.map((w: { id: string }) => w.id)).toContain(other.workflowId);
  });

  it("reaches its own workflow and runs", async () => {
    expect((await getRun(confinedKey, mine.runId)).status).toBe(200);
    const again = await enqueue(confinedKey, mine.workflowId);
    expect(again.status, again.text).toBe(202);
    expect((await enqueue(confinedKey, mine.workflowId, { "Idempotency-Key": "confined" })).status).toBe(202);
  });

  it("sees only its workflows and their runs in lists", async () => {
    const workflows = await call(workflowsRoute.GET, { path: "/api/workflows", token: confinedKey });
    expect(workflows.body.items.map((w: { id: string }) => w.id)).toEqual([mine.workflowId]);
    const runs = await call(accountRunsRoute.GET, { path: "/api/runs", token: confinedKey });
    expect(runs.body.items.length).toBeGreaterThan(0);
    expect(new Set(runs.body.items.map((r: { workflowId: string }) => r.workflowId))).toEqual(new Set([mine.workflowId]));
    const filtered = await call(accountRunsRoute.GET, { path: `/api/runs?workflowId=${other.workflowId}`, token: confinedKey });
    expect(filtered.body.items).toEqual([]);
    const everything = await call(workflowsRoute.GET, { path: "/api/workflows", token: openKey });
    expect(everything.body.items.map((w: { id: string }) => w.id).sort()).toEqual([mine.workflowId, other.workflowId].sort());
  });

  it("cannot create workflows, not even by duplicating its own", async () => {
    const graph = { nodes: [{ id: "t", type: "TRIGGER", data: {} }], edges: [] };
    for (const res of [
      await call(workflowsRoute.POST, { path: "/api/workflows", json: { name: "New", graph }, token: confinedKey }),
      await call(duplicateRoute.POST, {
        method: "POST",
        path: `/api/workflows/${mine.workflowId}/duplicate`,
        params: { workflowId: mine.workflowId },
        token: confinedKey,
      }),
    ]) {
      expect(res.status, res.text).toBe(403);
      expect(res.body.code).toBe("forbidden");
    }
    expect((await call(workflowsRoute.GET, { path: "/api/workflows", token: confinedKey })).body.items).toHaveLength(1);
  });
});

describe("webhooks and a key confined to some workflows", () => {
  const hook = (token: string, json: Record<string, unknown>) => call(webhooksRoute.POST, { method: "POST", path: "/api/webhooks", json, token });
  // Never called: registering does not deliver (loopback is a permitted target in tests).
  const url = "http://127.0.0.1:9/flowmail";

  it("registers a webhook for its own workflow only: account-wide or another workflow's is 403 problem+json", async () => {
    for (const json of [{ url }, { url, workflowId: other.workflowId }, { url, workflowId: "wf_doesnotexistdoesnotexist" }]) {
      const res = await hook(confinedKey, json);
      expect(res.status, res.text).toBe(403);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(res.body.code).toBe("forbidden");
      expect(res.text).not.toContain("Other secret");
    }
    expect((await hook(confinedKey, { url, workflowId: "wf_doesnotexistdoesnotexist" })).body.detail).toBe(
      (await hook(confinedKey, { url, workflowId: other.workflowId })).body.detail.replace(other.workflowId, "wf_doesnotexistdoesnotexist"),
    );
    const own = await hook(confinedKey, { url, workflowId: mine.workflowId });
    expect(own.status, own.text).toBe(201);
    expect(own.body.workflowId).toBe(mine.workflowId);
  });

  it("sees, deletes and reads deliveries of its workflows' webhooks only", async () => {
    const accountWide = await hook(openKey, { url: `${url}/all` });
    const others = await hook(openKey, { url: `${url}/other`, workflowId: other.workflowId });
    expect([accountWide.status, others.status]).toEqual([201, 201]);
    const listed = await call(webhooksRoute.GET, { path: "/api/webhooks", token: confinedKey });
    expect(listed.body.items.length).toBeGreaterThan(0);
    expect(new Set(listed.body.items.map((w: { workflowId: string | null }) => w.workflowId))).toEqual(new Set([mine.workflowId]));
    for (const id of [accountWide.body.id, others.body.id]) {
      const deliveries = await call(deliveriesRoute.GET, { path: `/api/webhooks/${id}/deliveries`, params: { webhookId: id }, token: confinedKey });
      expect(deliveries.status).toBe(404);
      const removed = await call(webhookRoute.DELETE, { method: "DELETE", path: `/api/webhooks/${id}`, params: { webhookId: id }, token: confinedKey });
      expect(removed.status).toBe(404);
    }
    const everything = await call(webhooksRoute.GET, { path: "/api/webhooks", token: openKey });
    expect(everything.body.items.map((w: { id: string }) => w.id)).toEqual(expect.arrayContaining([accountWide.body.id, others.body.id]));
  });
});
