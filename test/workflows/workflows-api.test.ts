import { count, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { googleLinks, runs, workflows, workflowVersions } from "@/db/schema";
import * as workflowsRoute from "@/app/api/workflows/route";
import * as validateRoute from "@/app/api/workflows/validate/route";
import * as workflowRoute from "@/app/api/workflows/[workflowId]/route";
import * as graphSchemaRoute from "@/app/api/schemas/graph/route";
import * as uploadsRoute from "@/app/api/uploads/route";
import * as uploadRoute from "@/app/api/uploads/[uploadId]/route";
import { newId } from "@/lib/ids";
import { call } from "@/test/support/http";
import { createTestAccount } from "@/test/support/accounts";

type Account = Awaited<ReturnType<typeof createTestAccount>>;
type Graph = { nodes: any[]; edges: any[] };

let alice: Account;
let bob: Account;
let aliceUpload: string;
let bobUpload: string;

async function uploadCsv(account: Account): Promise<string> {
  const form = new FormData();
  form.append("file", new File(["name,email,rating\nAda,ada@example.com,5\n"], "people.csv", { type: "text/csv" }));
  const res = await call(uploadsRoute.POST, { body: form, token: account.token });
  expect(res.status).toBe(201);
  return res.body.uploadId;
}

/** TRIGGER → DATA_SOURCE → AI → FILTER → OUTPUT, the spec's example shape. */
function linearGraph(uploadId = aliceUpload): Graph {
  return {
    nodes: [
      { id: "trigger", type: "TRIGGER", data: {}, position: { x: 0, y: 0 } },
      { id: "src", type: "DATA_SOURCE", data: { uploadId } },
      { id: "ai", type: "AI", data: { prompt: "Summarise {{src.rowCount}} rows", output: [{ name: "summary", type: "string" }] } },
      { id: "f", type: "FILTER", data: { source: "{{src.rows}}", expr: "rating >= 4" } },
      {
        id: "out",
        type: "OUTPUT",
        data: { forEach: "{{f.items}}", to: "{{item.email}}", subject: "Hello {{item.name}}", body: "Hi {{item.name}}, {{ai.summary}}" },
      },
    ],
    edges: [
      { source: "trigger", target: "src" },
      { source: "src", target: "ai" },
      { source: "ai", target: "f" },
      { source: "f", target: "out" },
    ],
  };
}

const create = (account: Account, json: unknown) => call(workflowsRoute.POST, { json, token: account.token });

async function counts() {
  const db = await getDb();
  const [w] = await db.select({ n: count() }).from(workflows);
  const [v] = await db.select({ n: count() }).from(workflowVersions);
  return { workflows: w.n, versions: v.n };
}

beforeAll(async () => {
  alice = await createTestAccount();
  bob = await createTestAccount();
  aliceUpload = await uploadCsv(alice);
  bobUpload = await uploadCsv(bob);
});

describe("POST /api/workflows", () => {
  it("stores the graph as submitted, version 1, and its first version row", async () => {
    const graph = linearGraph();
    const res = await create(alice, { name: "  Weekly digest  ", graph });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^wf_[A-Za-z0-9_-]{22}$/),
      name: "Weekly digest",
      graph,
      version: 1,
      schedule: null,
      nextRunAt: null,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: res.body.createdAt,
    });
    const fetched = await call(workflowRoute.GET, { token: alice.token, params: { workflowId: res.body.id } });
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(res.body);
    const db = await getDb();
    const versions = await db.select().from(workflowVersions).where(eq(workflowVersions.workflowId, res.body.id));
    expect(versions).toMatchObject([{ version: 1, name: "Weekly digest", graph }]);
  });

  it("validates the name and refuses unknown fields", async () => {
    for (const json of [{ name: "   ", graph: linearGraph() }, { name: "x".repeat(201), graph: linearGraph() }, { name: "ok" }, { name: "ok", graph: linearGraph(), owner: "me" }]) {
      const before = await counts();
      const res = await create(alice, json);
      expect(res.status).toBe(422);
      expect(res.body.code).toBe("validation_failed");
      expect(await counts()).toEqual(before);
    }
  });

  const badGraphs: [string, () => unknown, string][] = [
    ["a cycle", () => withEdges(linearGraph(), { source: "f", target: "ai" }), "cycle"],
    ["a self-loop", () => withEdges(linearGraph(), { source: "ai", target: "ai" }), "self_loop"],
    ["a dangling edge", () => withEdges(linearGraph(), { source: "ai", target: "ghost" }), "unknown_edge_endpoint"],
    ["two TRIGGERs", () => withNodes(linearGraph(), { id: "t2", type: "TRIGGER", data: {} }), "trigger_count"],
    ["no OUTPUT", () => ({ nodes: linearGraph().nodes.slice(0, 4), edges: linearGraph().edges.slice(0, 3) }), "no_output"],
    ["duplicate ids", () => withNodes(linearGraph(), { id: "ai", type: "TRIGGER", data: {} }), "duplicate_node_id"],
    ["10,000 nodes", () => tenThousandNodes(), "too_large"],
    ["an unknown node type", () => withEdges(withNodes(linearGraph(), { id: "x", type: "WEBHOOK", data: {} }), { source: "f", target: "x" }), "invalid_node_data"],
    ["a constructor escape in a template", () => withSubject("{{constructor.constructor('return process')()}}"), "invalid_template"],
    ["{{__proto__}}", () => withSubject("{{__proto__}}"), "invalid_template"],
    ["Function in an expression", () => withExpr("Function('return process')()"), "invalid_expression"],
    ["with in an expression", () => withExpr("with (item) { rating }"), "invalid_expression"],
    ["this in an expression", () => withExpr("this.rating > 1"), "invalid_expression"],
    ["import() in an expression", () => withExpr("import('fs')"), "invalid_expression"],
    ["another account's upload", () => linearGraph(bobUpload), "unknown_upload"],
    ["an upload that does not exist", () => linearGraph(newId("upl")), "unknown_upload"],
    ["not an object", () => "nodes", "invalid_graph"],
  ];

  for (const [label, build, code] of badGraphs) {
    it(`refuses ${label} with 422 invalid_graph, storing nothing`, async () => {
      const before = await counts();
      const res = await create(alice, { name: "bad", graph: build() });
      expect(res.status).toBe(422);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(res.body).toMatchObject({ type: "about:blank", status: 422, code: "invalid_graph", title: "Unprocessable graph" });
      expect(res.body.errors.map((e: { code: string }) => e.code)).toContain(code);
      for (const item of res.body.errors) expect(item.path).toMatch(/^graph/);
      expect(await counts()).toEqual(before);
    });
  }

  it("keeps __proto__ and constructor keys in a graph inert", async () => {
    const before = await counts();
    const graph = JSON.stringify(linearGraph()).replace('"data":{}', '"data":{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}');
    const res = await call(workflowsRoute.POST, {
      body: `{"name":"proto","graph":${graph},"__proto__":{"polluted":true}}`,
      headers: { "content-type": "application/json" },
      token: alice.token,
    });
    expect(res.status).toBe(422);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(await counts()).toEqual(before);
    const inGraph = await create(alice, { name: "proto", graph: JSON.parse(`{"__proto__":{"polluted":true},"nodes":[],"edges":[]}`) });
    expect(inGraph.status).toBe(422);
    expect(inGraph.body.code).toBe("invalid_graph");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("lists every problem at once, including the unknown upload", async () => {
    const graph = withEdges(linearGraph(bobUpload), { source: "ai", target: "ai" }, { source: "ai", target: "ghost" });
    const res = await create(alice, { name: "bad", graph });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: "self_loop" }),
        expect.objectContaining({ code: "unknown_edge_endpoint" }),
        { path: "graph.nodes[1].data.uploadId", code: "unknown_upload", message: expect.any(String), nodeId: "src" },
      ]),
    );
  });

  it("refuses a deleted upload the same way", async () => {
    const uploadId = await uploadCsv(alice);
    expect((await call(uploadRoute.DELETE, { method: "DELETE", token: alice.token, params: { uploadId } })).status).toBe(204);
    const res = await create(alice, { name: "stale", graph: linearGraph(uploadId) });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([expect.objectContaining({ code: "unknown_upload", nodeId: "src" })]);
  });

  it("needs an active Google link for a Drive file", async () => {
    const graph = linearGraph();
    graph.nodes[1].data = { driveFileId: "1AbCdEf" };
    const refused = await create(alice, { name: "drive", graph });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([
      { path: "graph.nodes[1].data.driveFileId", code: "invalid_node_data", message: "Connect Google Drive in Settings before using a Drive file", nodeId: "src" },
    ]);
    const db = await getDb();
    await db.insert(googleLinks).values({ accountId: alice.id, googleEmail: "a@gmail.com", scopes: [], refreshTokenEncrypted: "x", status: "broken" });
    expect((await create(alice, { name: "drive", graph })).status).toBe(422);
    await db.update(googleLinks).set({ status: "active" }).where(eq(googleLinks.accountId, alice.id));
    expect((await create(alice, { name: "drive", graph })).status).toBe(201);
  });

  it("answers 413 to a 2 MiB JSON body, storing nothing", async () => {
    const before = await counts();
    const res = await create(alice, { name: "huge", graph: { ...linearGraph(), padding: "x".repeat(2 * 1024 * 1024) } });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe("payload_too_large");
    expect(await counts()).toEqual(before);
  });
});

describe("POST /api/workflows/validate", () => {
  it("answers valid for a good graph and every error for a bad one, storing nothing", async () => {
    const before = await counts();
    const good = await call(validateRoute.POST, { json: { graph: linearGraph() }, token: alice.token });
    expect(good.status).toBe(200);
    expect(good.body).toEqual({ valid: true, errors: [] });
    const bad = await call(validateRoute.POST, { json: { graph: withEdges(linearGraph(bobUpload), { source: "f", target: "ai" }) }, token: alice.token });
    expect(bad.status).toBe(200);
    expect(bad.body.valid).toBe(false);
    expect(bad.body.errors.map((e: { code: string }) => e.code).sort()).toEqual(["cycle", "unknown_upload"]);
    expect(await counts()).toEqual(before);
  });
});

describe("reading, updating and deleting", () => {
  it("lists newest-updated first with nodeCount, lastRun and pagination, only the account's own", async () => {
    const carol = await createTestAccount();
    const upload = await uploadCsv(carol);
    const ids: string[] = [];
    for (const name of ["A", "B", "C"]) ids.push((await create(carol, { name, graph: linearGraph(upload) })).body.id);
    await create(bob, { name: "Bob's", graph: linearGraph(bobUpload) });
    const db = await getDb();
    // distinct update times, so the order does not hang on creations within one millisecond
    await db.update(workflows).set({ updatedAt: new Date(Date.now() - 20_000) }).where(eq(workflows.id, ids[1]));
    await db.update(workflows).set({ updatedAt: new Date(Date.now() - 10_000) }).where(eq(workflows.id, ids[2]));
    // touching A makes it the most recently updated
    const renamed = await call(workflowRoute.PATCH, { method: "PATCH", json: { name: "A2" }, token: carol.token, params: { workflowId: ids[0] } });
    expect(renamed.status).toBe(200);
    const older = new Date(Date.now() - 60_000);
    await db.insert(runs).values([
      { id: newId("run"), workflowId: ids[1], accountId: carol.id, workflowVersion: 1, status: "SUCCESS", graph: linearGraph(upload), enqueuedAt: older },
      { id: "run_latest_for_b", workflowId: ids[1], accountId: carol.id, workflowVersion: 1, status: "PENDING", graph: linearGraph(upload) },
    ]);
    const first = await call(workflowsRoute.GET, { path: "/api/workflows?limit=2", token: carol.token });
    expect(first.status).toBe(200);
    expect(first.body.items).toEqual([
      { id: ids[0], name: "A2", version: 1, createdAt: expect.any(String), updatedAt: renamed.body.updatedAt, nodeCount: 5, lastRun: null },
      expect.objectContaining({ id: ids[2], name: "C", lastRun: null }),
    ]);
    const second = await call(workflowsRoute.GET, { path: `/api/workflows?limit=2&cursor=${first.body.nextCursor}`, token: carol.token });
    expect(second.body).toEqual({
      items: [expect.objectContaining({ id: ids[1], lastRun: { runId: "run_latest_for_b", status: "PENDING", enqueuedAt: expect.any(String) } })],
      nextCursor: null,
    });
  });

  it("PATCH bumps the version only when the graph changes, keeping each version", async () => {
    const { body: wf } = await create(alice, { name: "Versioned", graph: linearGraph() });
    const patch = (json: unknown) => call(workflowRoute.PATCH, { method: "PATCH", json, token: alice.token, params: { workflowId: wf.id } });

    const sameGraphReordered = JSON.parse(JSON.stringify(linearGraph(), (_k, v) => (v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v)));
    const unchanged = await patch({ graph: sameGraphReordered });
    expect(unchanged.status).toBe(200);
    expect(unchanged.body.version).toBe(1);

    const renamed = await patch({ name: "Renamed" });
    expect(renamed.body).toMatchObject({ name: "Renamed", version: 1 });

    const changed = linearGraph();
    changed.nodes[3].data.expr = "rating >= 5";
    const updated = await patch({ graph: changed });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: "Renamed", version: 2, graph: changed });
    expect(new Date(updated.body.updatedAt).getTime()).toBeGreaterThanOrEqual(new Date(wf.updatedAt).getTime());

    const before = await counts();
    const invalid = await patch({ graph: withEdges(changed, { source: "out", target: "trigger" }) });
    expect(invalid.status).toBe(422);
    expect(invalid.body.code).toBe("invalid_graph");
    expect(await counts()).toEqual(before);
    expect((await patch({ name: "" })).status).toBe(422);

    const db = await getDb();
    const versions = await db.select().from(workflowVersions).where(eq(workflowVersions.workflowId, wf.id)).orderBy(workflowVersions.version);
    expect(versions.map((v) => [v.version, (v.graph as Graph).nodes[3].data.expr])).toEqual([[1, "rating >= 4"], [2, "rating >= 5"]]);
    const fetched = await call(workflowRoute.GET, { token: alice.token, params: { workflowId: wf.id } });
    expect(fetched.body).toMatchObject({ version: 2, name: "Renamed", graph: changed });
  });

  it("answers 422 to a forged cursor and 404 to any unknown id", async () => {
    const forged = Buffer.from(JSON.stringify({ k: 12, id: "x" })).toString("base64url");
    const res = await call(workflowsRoute.GET, { path: `/api/workflows?cursor=${forged}`, token: alice.token });
    expect(res.status).toBe(422);
    expect(res.body.errors[0]).toMatchObject({ path: "query.cursor", code: "invalid_cursor" });
    for (const workflowId of ["wf_" + "x".repeat(500), "constructor"]) {
      expect((await call(workflowRoute.GET, { token: alice.token, params: { workflowId } })).status).toBe(404);
    }
  });

  it("answers 404 for another account's workflow on every verb", async () => {
    const { body: wf } = await create(alice, { name: "Private", graph: linearGraph() });
    const params = { workflowId: wf.id };
    expect((await call(workflowRoute.GET, { token: bob.token, params })).status).toBe(404);
    expect((await call(workflowRoute.PATCH, { method: "PATCH", json: { name: "mine" }, token: bob.token, params })).status).toBe(404);
    expect((await call(workflowRoute.DELETE, { method: "DELETE", token: bob.token, params })).status).toBe(404);
    const list = await call(workflowsRoute.GET, { path: "/api/workflows?limit=100", token: bob.token });
    expect(list.body.items.map((w: { id: string }) => w.id)).not.toContain(wf.id);
    expect((await call(workflowRoute.GET, { token: alice.token, params })).body.name).toBe("Private");
  });

  it("DELETE soft-deletes and fails the pending runs, leaving finished ones alone", async () => {
    const { body: wf } = await create(alice, { name: "Doomed", graph: linearGraph() });
    const db = await getDb();
    const base = { workflowId: wf.id, accountId: alice.id, workflowVersion: 1, graph: linearGraph() };
    await db.insert(runs).values([
      { ...base, id: "run_pending_1", status: "PENDING" as const },
      { ...base, id: "run_pending_2", status: "PENDING" as const },
      { ...base, id: "run_done", status: "SUCCESS" as const, completedAt: new Date(Date.now() - 1000) },
    ]);
    const res = await call(workflowRoute.DELETE, { method: "DELETE", token: alice.token, params: { workflowId: wf.id } });
    expect(res.status).toBe(204);
    const after = await db.select().from(runs).where(eq(runs.workflowId, wf.id)).orderBy(runs.id);
    expect(after.map((r) => [r.id, r.status, r.error, r.completedAt instanceof Date])).toEqual([
      ["run_done", "SUCCESS", null, true],
      ["run_pending_1", "FAILED", "Workflow deleted", true],
      ["run_pending_2", "FAILED", "Workflow deleted", true],
    ]);
    const [row] = await db.select().from(workflows).where(eq(workflows.id, wf.id));
    expect(row.deletedAt).toBeInstanceOf(Date);
    expect((await call(workflowRoute.GET, { token: alice.token, params: { workflowId: wf.id } })).status).toBe(404);
    expect((await call(workflowRoute.DELETE, { method: "DELETE", token: alice.token, params: { workflowId: wf.id } })).status).toBe(404);
    const list = await call(workflowsRoute.GET, { path: "/api/workflows?limit=100", token: alice.token });
    expect(list.body.items.map((w: { id: string }) => w.id)).not.toContain(wf.id);
  });
});

describe("GET /api/schemas/graph", () => {
  it("serves the graph JSON Schema without auth", async () => {
    const res = await call(graphSchemaRoute.GET, { path: "/api/schemas/graph" });
    expect(res.status).toBe(200);
    const schema = JSON.parse(res.text);
    expect(schema.type).toBe("object");
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(["nodes", "edges"]));
  });
});

function withEdges(graph: Graph, ...edges: { source: string; target: string }[]): Graph {
  return { ...graph, edges: [...graph.edges, ...edges] };
}

function withNodes(graph: Graph, ...nodes: unknown[]): Graph {
  return { ...graph, nodes: [...graph.nodes, ...nodes] };
}

function withSubject(subject: string): Graph {
  const graph = linearGraph();
  graph.nodes[4].data.subject = subject;
  return graph;
}

function withExpr(expr: string): Graph {
  const graph = linearGraph();
  graph.nodes[3].data.expr = expr;
  return graph;
}

function tenThousandNodes(): Graph {
  const nodes = Array.from({ length: 10_000 }, (_, i) => ({ id: `n${i}`, type: "AI", data: {} }));
  return { nodes, edges: [] };
}
