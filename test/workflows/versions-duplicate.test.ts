// CONTRACT 16 (versions, duplicate) and the save-time checks of issue 17: unknown item columns, forEach not a list.
import { beforeAll, describe, expect, it } from "vitest";
import * as workflowsRoute from "@/app/api/workflows/route";
import * as validateRoute from "@/app/api/workflows/validate/route";
import * as workflowRoute from "@/app/api/workflows/[workflowId]/route";
import * as versionsRoute from "@/app/api/workflows/[workflowId]/versions/route";
import * as versionRoute from "@/app/api/workflows/[workflowId]/versions/[version]/route";
import * as duplicateRoute from "@/app/api/workflows/[workflowId]/duplicate/route";
import * as uploadsRoute from "@/app/api/uploads/route";
import { call } from "@/test/support/http";
import { createTestAccount } from "@/test/support/accounts";

type Account = Awaited<ReturnType<typeof createTestAccount>>;
let alice: Account;
let uploadId: string;

function graph(subject = "Hi {{item.name}}", forEach = "{{f.items}}") {
  return {
    nodes: [
      { id: "start", type: "TRIGGER", data: {} },
      { id: "src", type: "DATA_SOURCE", data: { uploadId } },
      { id: "f", type: "FILTER", data: { source: "{{src.rows}}", expr: "rating >= 4" } },
      { id: "out", type: "OUTPUT", data: { forEach, to: "{{item.email}}", subject, body: "Thanks {{ item.name }}" } },
    ],
    edges: [
      { source: "start", target: "src" },
      { source: "src", target: "f" },
      { source: "f", target: "out" },
    ],
  };
}

const validate = async (g: unknown) => (await call(validateRoute.POST, { json: { graph: g }, token: alice.token })).body;

beforeAll(async () => {
  alice = await createTestAccount();
  const form = new FormData();
  form.append("file", new File(["name,email,rating\nAda,ada@example.com,5\n"], "people.csv", { type: "text/csv" }));
  uploadId = (await call(uploadsRoute.POST, { body: form, token: alice.token })).body.uploadId;
});

describe("versions", () => {
  it("lists every saved graph newest first, pages with a cursor, and serves each version's graph", async () => {
    const created = await call(workflowsRoute.POST, { json: { name: "Thanks", graph: graph() }, token: alice.token });
    const workflowId = created.body.id;
    const params = { workflowId };
    await call(workflowRoute.PATCH, { method: "PATCH", params, json: { graph: graph("Hello {{item.name}}") }, token: alice.token });
    await call(workflowRoute.PATCH, { method: "PATCH", params, json: { name: "Renamed" }, token: alice.token }); // no new version
    await call(workflowRoute.PATCH, { method: "PATCH", params, json: { graph: graph("Hey {{item.name}}") }, token: alice.token });

    const all = await call(versionsRoute.GET, { path: `/api/workflows/${workflowId}/versions`, params, token: alice.token });
    expect(all.status).toBe(200);
    expect(all.body.items.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);
    expect(all.body.items[0]).toMatchObject({ version: 3, name: "Renamed", nodeCount: 4 });
    expect(all.body.items[2].name).toBe("Thanks");
    expect(all.body.nextCursor).toBeNull();

    const first = await call(versionsRoute.GET, { path: `/api/workflows/${workflowId}/versions?limit=2`, params, token: alice.token });
    expect(first.body.items.map((v: { version: number }) => v.version)).toEqual([3, 2]);
    const second = await call(versionsRoute.GET, { path: `/api/workflows/${workflowId}/versions?limit=2&cursor=${first.body.nextCursor}`, params, token: alice.token });
    expect(second.body.items.map((v: { version: number }) => v.version)).toEqual([1]);

    const v2 = await call(versionRoute.GET, { params: { workflowId, version: "2" }, token: alice.token });
    expect(v2.status).toBe(200);
    expect(v2.body.graph.nodes[3].data.subject).toBe("Hello {{item.name}}");
    expect(v2.body.version).toBe(2);

    // Restore = PATCH with the old graph: a new version 4 equal to version 2.
    const restored = await call(workflowRoute.PATCH, { method: "PATCH", params, json: { graph: v2.body.graph }, token: alice.token });
    expect(restored.body.version).toBe(4);
    expect(restored.body.graph.nodes[3].data.subject).toBe("Hello {{item.name}}");

    expect((await call(versionRoute.GET, { params: { workflowId, version: "9" }, token: alice.token })).status).toBe(404);
    expect((await call(versionRoute.GET, { params: { workflowId, version: "abc" }, token: alice.token })).status).toBe(422);
    const badCursor = await call(versionsRoute.GET, { path: `/api/workflows/${workflowId}/versions?cursor=${Buffer.from('{"k":"x","id":"1"}').toString("base64url")}`, params, token: alice.token });
    expect(badCursor.status).toBe(422);
  });

  it("answers 404 for another account's workflow and a deleted one", async () => {
    const bob = await createTestAccount();
    const created = await call(workflowsRoute.POST, { json: { name: "Mine", graph: graph() }, token: alice.token });
    const params = { workflowId: created.body.id };
    expect((await call(versionsRoute.GET, { params, token: bob.token })).status).toBe(404);
    expect((await call(versionRoute.GET, { params: { ...params, version: "1" }, token: bob.token })).status).toBe(404);
    expect((await call(duplicateRoute.POST, { method: "POST", params, token: bob.token })).status).toBe(404);
    await call(workflowRoute.DELETE, { method: "DELETE", params, token: alice.token });
    expect((await call(versionsRoute.GET, { params, token: alice.token })).status).toBe(404);
  });
});

describe("duplicate", () => {
  it("creates 'Copy of <name>' with the same graph as version 1, leaving the original alone", async () => {
    const created = await call(workflowsRoute.POST, { json: { name: "Weekly thanks", graph: graph() }, token: alice.token });
    const params = { workflowId: created.body.id };
    await call(workflowRoute.PATCH, { method: "PATCH", params, json: { graph: graph("Hello {{item.name}}") }, token: alice.token });
    const copy = await call(duplicateRoute.POST, { method: "POST", params, token: alice.token });
    expect(copy.status).toBe(201);
    expect(copy.body).toMatchObject({ name: "Copy of Weekly thanks", version: 1 });
    expect(copy.body.id).not.toBe(created.body.id);
    expect(copy.body.graph.nodes[3].data.subject).toBe("Hello {{item.name}}");
    const versions = await call(versionsRoute.GET, { params: { workflowId: copy.body.id }, token: alice.token });
    expect(versions.body.items).toHaveLength(1);
    const original = await call(workflowRoute.GET, { params, token: alice.token });
    expect(original.body).toMatchObject({ name: "Weekly thanks", version: 2 });
  });
});

describe("save-time checks", () => {
  it("refuses {{item.x}} naming a column the upload feeding the OUTPUT lacks, naming the columns it has", async () => {
    const result = await validate(graph("Hi {{item.nope}}"));
    expect(result.valid).toBe(false);
    expect(result.errors).toEqual([
      expect.objectContaining({ code: "unknown_column", nodeId: "out", path: "graph.nodes[3].data.subject", message: expect.stringContaining("name, email, rating") }),
    ]);
    const saved = await call(workflowsRoute.POST, { json: { name: "Bad", graph: graph("Hi {{item.nope}}") }, token: alice.token });
    expect(saved.status).toBe(422);
    expect(saved.body.errors.map((e: { code: string }) => e.code)).toEqual(["unknown_column"]);
    // Directly over the rows works the same; known columns pass.
    expect((await validate(graph("Hi {{item.name}}", "{{src.rows}}"))).valid).toBe(true);
    expect((await validate(graph("Hi {{item.Name}}", "{{src.rows}}"))).errors[0].code).toBe("unknown_column");
  });

  it("refuses a forEach or FILTER source that cannot be a list, but leaves a hook body to the run", async () => {
    const trigger = await validate(graph("Hi", "{{start}}"));
    expect(trigger.errors).toEqual([expect.objectContaining({ code: "not_a_list", nodeId: "out", path: "graph.nodes[3].data.forEach" })]);
    expect((await validate(graph("Hi", "{{src.rowCount}}"))).errors[0].code).toBe("not_a_list");
    expect((await validate(graph("Hi", "{{f.count}}"))).errors[0].code).toBe("not_a_list");
    expect((await validate(graph("Hi", "{{start.body.people}}"))).valid).toBe(true);
    const g = graph();
    g.nodes[2].data.source = "{{src.rowCount}}";
    expect((await validate(g)).errors.map((e: { code: string; nodeId: string }) => [e.code, e.nodeId])).toEqual([["not_a_list", "f"]]);
  });
});
