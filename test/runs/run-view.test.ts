// The run view's output preview (arrays cut to 100 elements in PostgreSQL, `outputTruncated` exact) and the output
// endpoint's pages (sliced in PostgreSQL), over node results written directly in every shape a node can produce.
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { GET as nodeOutputHandler } from "@/app/api/workflows/runs/[runId]/nodes/[nodeId]/output/route";
import { getDb } from "@/db/client";
import { nodeResults, runs } from "@/db/schema";
import { newId } from "@/lib/ids";
import { truncateArrays } from "@/lib/services/runs/truncate-output";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";
import { getRun, insertWorkflow } from "./helpers";

type NodeSpec = { id: string; type?: string; status?: string; output: unknown };

const rows = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => ({ name: `n${from + i}`, email: `p${from + i}@example.com`, score: String((from + i) % 10) }));
const numbers = (n: number) => Array.from({ length: n }, (_, i) => i);

/** An object nested `levels` deep ({ d: { d: … { leaf } } }). */
const nested = (levels: number, leaf: unknown): unknown => (levels === 0 ? leaf : { d: nested(levels - 1, leaf) });

let token: string;
let accountId: string;
let workflowId: string;

beforeAll(async () => {
  ({ id: accountId, token } = await createTestAccount());
  workflowId = await insertWorkflow(accountId, { nodes: [{ id: "t", type: "TRIGGER", data: {} }], edges: [] });
});

/** A run whose snapshot lists `nodes` in order, with one node result each (output stored as given, any JSON). */
async function insertRun(nodes: NodeSpec[]): Promise<string> {
  const db = await getDb();
  const runId = newId("run");
  const graph = { nodes: nodes.map((n) => ({ id: n.id, type: n.type ?? "AI", data: {} })), edges: [] };
  await db.insert(runs).values({ id: runId, workflowId, accountId, workflowVersion: 1, graph, status: "SUCCESS", startedAt: new Date(), completedAt: new Date() });
  for (const n of nodes) {
    await db.insert(nodeResults).values({ runId, nodeId: n.id, type: n.type ?? "AI", status: (n.status ?? "SUCCESS") as "SUCCESS", startedAt: new Date(), completedAt: new Date() });
    if (n.output !== undefined) {
      await db.execute(sql`update node_results set output = ${JSON.stringify(n.output)}::jsonb where run_id = ${runId} and node_id = ${n.id}`);
    }
  }
  return runId;
}

const page = (runId: string, nodeId: string, query: string) =>
  call(nodeOutputHandler, { path: `/api/workflows/runs/${runId}/nodes/${nodeId}/output${query}`, token, params: { runId, nodeId } });

describe("GET /api/workflows/runs/:runId — output preview", () => {
  it("cuts each top-level array to its first 100 elements; outputTruncated is exact at 100/101", async () => {
    const runId = await insertRun([
      { id: "src", type: "DATA_SOURCE", output: { rows: rows(2500), rowCount: 2500, columns: ["name", "email", "score"] } },
      { id: "f100", type: "FILTER", output: { items: rows(100), count: 100, filteredOut: 7 } },
      { id: "f101", type: "FILTER", output: { items: rows(101), count: 101, filteredOut: 0 } },
      { id: "f99", type: "FILTER", output: { items: rows(99), count: 99, filteredOut: 1 } },
      { id: "empty", type: "FILTER", output: { items: [], count: 0, filteredOut: 3 } },
      { id: "out", type: "OUTPUT", output: { emailsSent: 12 } },
      { id: "t", type: "TRIGGER", output: {} },
    ]);
    const res = await getRun(token, runId);
    expect(res.status).toBe(200);
    const nodes = res.body.nodes;
    expect(nodes.src.output).toEqual({ rows: rows(100), rowCount: 2500, columns: ["name", "email", "score"] });
    expect(nodes.src.outputTruncated).toBe(true);
    expect(nodes.f100.output).toEqual({ items: rows(100), count: 100, filteredOut: 7 });
    expect(nodes.f100.outputTruncated).toBe(false);
    expect(nodes.f101.output.items).toEqual(rows(100));
    expect(nodes.f101.outputTruncated).toBe(true);
    expect(nodes.f99.output.items).toEqual(rows(99));
    expect(nodes.f99.outputTruncated).toBe(false);
    expect(nodes.empty).toMatchObject({ output: { items: [], count: 0, filteredOut: 3 }, outputTruncated: false });
    expect(nodes.out).toMatchObject({ type: "OUTPUT", status: "SUCCESS", output: { emailsSent: 12 }, outputTruncated: false, error: null });
    expect(nodes.t).toMatchObject({ type: "TRIGGER", output: {}, outputTruncated: false });
    expect(nodes.src.startedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const arrayForm = (await getRun(token, runId, "?nodes=array")).body;
    expect(arrayForm.nodes.map((n: { id: string }) => n.id)).toEqual(["src", "f100", "f101", "f99", "empty", "out", "t"]);
    expect(arrayForm.nodes[0]).toEqual({ id: "src", ...nodes.src });
  });

  it("lists the run's log lines in order, times to the millisecond in UTC, a node id only on a node's line", async () => {
    const runId = await insertRun([{ id: "t", type: "TRIGGER", output: {} }]);
    const db = await getDb();
    // Written out of time order on purpose: lines come in the order they were written (id), whatever their times
    // (stored to the millisecond, the column's precision).
    await db.execute(sql`insert into run_logs (run_id, at, level, node_id, message) values
      (${runId}, '2026-11-25 10:00:01.1234+00', 'info', null, 'Run started (workflow version 1)'),
      (${runId}, '2026-11-25 11:00:00.9994+01', 'error', 't', 'Node "t" failed: "x" < ''y'' & é'),
      (${runId}, '2026-11-25 10:00:00.5+00', 'warn', null, 'last')`);
    const other = await insertRun([{ id: "t", type: "TRIGGER", output: {} }]);
    await db.execute(sql`insert into run_logs (run_id, level, message) values (${other}, 'info', 'another run')`);
    const res = await getRun(token, runId);
    expect(res.status).toBe(200);
    expect(res.body.logs).toEqual([
      { at: "2026-11-25T10:00:01.123Z", level: "info", message: "Run started (workflow version 1)" },
      { at: "2026-11-25T10:00:00.999Z", level: "error", nodeId: "t", message: 'Node "t" failed: "x" < \'y\' & é' },
      { at: "2026-11-25T10:00:00.500Z", level: "warn", message: "last" },
    ]);
  });

  it("cuts nested arrays too (AI outputs), as a walk over the whole output would", async () => {
    const outputs: Record<string, unknown> = {
      // a short top-level array whose elements hold long arrays
      shortOuter: { list: [{ tags: numbers(150), name: "a" }, { tags: numbers(3) }, [numbers(101), numbers(100)]], n: 1 },
      // a long top-level array whose first elements hold long arrays (both levels cut)
      longOuter: { list: Array.from({ length: 130 }, (_, i) => ({ i, tags: numbers(120 + i) })) },
      // long arrays under objects
      underObjects: { summary: { inner: { arr: numbers(200), note: "x" }, count: 2 }, flat: numbers(5) },
      // nested, but nothing longer than 100 anywhere
      nestedShort: { summary: { inner: { arr: numbers(100) } }, list: [[numbers(100)], { a: [null, true, "é"] }] },
      // an array of arrays of arrays
      cube: { c: Array.from({ length: 102 }, (_, i) => Array.from({ length: 101 }, (_, j) => (j === 99 ? numbers(103) : [i, j]))) },
      // objects deeper than 32 levels are shown as they are (the walk's depth limit), shallower ones are cut
      deepObjects: { shallow: nested(30, numbers(150)), deep: nested(40, numbers(150)) },
      // scalars and nulls of every kind next to a long array
      scalars: { big: 1e300, neg: -0.5, s: 'quote " and \\ and ☃', b: false, z: null, arr: [null, ...numbers(120)], emptyObj: {}, emptyArr: [] },
    };
    const runId = await insertRun(Object.entries(outputs).map(([id, output]) => ({ id, output })));
    const { nodes } = (await getRun(token, runId)).body;
    for (const [id, output] of Object.entries(outputs)) {
      const expected = truncateArrays(output, 100);
      expect(nodes[id].output, id).toEqual(expected.value);
      expect(nodes[id].outputTruncated, id).toBe(expected.truncated);
    }
    // Spelled out, so that the reference walk is not the only judge.
    expect(nodes.shortOuter.outputTruncated).toBe(true);
    expect(nodes.shortOuter.output.list[0].tags).toEqual(numbers(100));
    expect(nodes.shortOuter.output.list[2]).toEqual([numbers(100), numbers(100)]);
    expect(nodes.longOuter.output.list).toHaveLength(100);
    expect(nodes.longOuter.output.list[99]).toEqual({ i: 99, tags: numbers(100) });
    expect(nodes.underObjects.output).toEqual({ summary: { inner: { arr: numbers(100), note: "x" }, count: 2 }, flat: numbers(5) });
    expect(nodes.nestedShort.outputTruncated).toBe(false);
    expect(nodes.cube.output.c).toHaveLength(100);
    expect(nodes.cube.output.c[99]).toHaveLength(100);
    expect(nodes.cube.output.c[99][99]).toEqual(numbers(100));
    expect(JSON.stringify(nodes.deepObjects.output.deep)).toBe(JSON.stringify(nested(40, numbers(150))));
    expect(JSON.stringify(nodes.deepObjects.output.shallow)).toBe(JSON.stringify(nested(30, numbers(100))));
    expect(nodes.scalars.output).toEqual({ ...(outputs.scalars as object), arr: [null, ...numbers(99)] });
  });

  it("an array deeper than the 100 shown elements does not count", async () => {
    // Element 150 holds a long array, but it is not part of the preview; only the outer array is cut.
    const list: unknown[] = numbers(200);
    list[150] = numbers(500);
    const runId = await insertRun([{ id: "a", output: { list } }, { id: "b", output: { list: list.slice(0, 100) } }]);
    const { nodes } = (await getRun(token, runId)).body;
    expect(nodes.a.output.list).toEqual(numbers(100));
    expect(nodes.a.outputTruncated).toBe(true);
    expect(nodes.b.outputTruncated).toBe(false);
  });

  it("shows no output for nodes that did not succeed, nor for a missing output", async () => {
    const runId = await insertRun([
      { id: "running", status: "RUNNING", output: undefined },
      { id: "failed", status: "FAILED", output: { rows: rows(300) } },
      { id: "skipped", status: "SKIPPED", output: undefined },
      { id: "none", status: "SUCCESS", output: undefined },
      { id: "pending", status: "PENDING", output: undefined },
    ]);
    const { nodes } = (await getRun(token, runId)).body;
    for (const id of ["running", "failed", "skipped", "none", "pending"]) {
      expect(nodes[id], id).toMatchObject({ output: null, outputTruncated: false });
    }
    expect(nodes.failed.status).toBe("FAILED");
  });

  it("previews an output that is not an object (never written by the nodes) without failing", async () => {
    const runId = await insertRun([
      { id: "arr", output: numbers(150) },
      { id: "num", output: 5 },
      { id: "nul", output: null },
    ]);
    const res = await getRun(token, runId);
    expect(res.status).toBe(200);
    expect(res.body.nodes.arr).toMatchObject({ output: numbers(100), outputTruncated: true });
    expect(res.body.nodes.num).toMatchObject({ output: 5, outputTruncated: false });
    expect(res.body.nodes.nul).toMatchObject({ output: null, outputTruncated: false });
  });

  it("sends only the preview of a large output", async () => {
    const runId = await insertRun([{ id: "src", type: "DATA_SOURCE", output: { rows: rows(20_000), rowCount: 20_000 } }]);
    const res = await getRun(token, runId);
    expect(res.body.nodes.src.output.rows).toEqual(rows(100));
    expect(res.text.length).toBeLessThan(20_000);
  });
});

describe("GET /api/workflows/runs/:runId/nodes/:nodeId/output — pages", () => {
  let runId: string;
  beforeAll(async () => {
    runId = await insertRun([
      { id: "src", type: "DATA_SOURCE", output: { rows: rows(2500), rowCount: 2500, columns: ["name", "email", "score"] } },
      { id: "f", type: "FILTER", output: { items: rows(250), count: 250, filteredOut: 0 } },
      { id: "ai", output: { summary: { list: numbers(300), n: 1 }, groups: [{ tags: numbers(150) }], text: "t", nothing: null } },
      { id: "noarr", output: { emailsSent: 3 } },
      { id: "failed", status: "FAILED", output: undefined },
      { id: "weird", output: numbers(10) },
    ]);
  });

  it("pages a field", async () => {
    const res = await page(runId, "src", "?field=rows&offset=2450&limit=30");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ items: rows(30, 2450), total: 2500 });
    expect((await page(runId, "src", "?field=rows&offset=2490&limit=30")).body).toEqual({ items: rows(10, 2490), total: 2500 });
    expect((await page(runId, "src", "?field=rows")).body).toEqual({ items: rows(100), total: 2500 });
    expect((await page(runId, "src", "?field=rows&offset=0&limit=1000")).body.items).toEqual(rows(1000));
    expect((await page(runId, "src", "?field=columns")).body).toEqual({ items: ["name", "email", "score"], total: 3 });
  });

  it("answers an empty page past the end, however far", async () => {
    expect((await page(runId, "src", "?field=rows&offset=2500")).body).toEqual({ items: [], total: 2500 });
    const far = await page(runId, "src", "?field=rows&offset=99999999999999&limit=1000");
    expect(far.status).toBe(200);
    expect(far.body).toEqual({ items: [], total: 2500 });
  });

  it("defaults to the output's only array, and asks for a field when there are several", async () => {
    expect((await page(runId, "f", "?offset=200&limit=100")).body).toEqual({ items: rows(50, 200), total: 250 });
    const several = await page(runId, "src", "");
    expect(several.status).toBe(422);
    expect(several.body.detail).toMatch(/several arrays \((rows, columns|columns, rows)\)/);
    expect((await page(runId, "noarr", "")).body).toEqual({ items: [], total: 0 });
    expect((await page(runId, "failed", "")).body).toEqual({ items: [], total: 0 });
  });

  it("follows dot paths through objects and array elements", async () => {
    expect((await page(runId, "ai", "?field=summary.list&offset=290")).body).toEqual({ items: numbers(300).slice(290), total: 300 });
    expect((await page(runId, "ai", "?field=groups.0.tags&offset=100&limit=5")).body).toEqual({ items: [100, 101, 102, 103, 104], total: 150 });
    expect((await page(runId, "ai", "?field=groups")).body).toEqual({ items: [{ tags: numbers(150) }], total: 1 });
  });

  it("names a missing field or a field that is not an array (422, never 500)", async () => {
    const cases: [string, string, RegExp][] = [
      ["ai", "nope", /no field "nope"/],
      ["ai", "summary.nope", /no field/],
      ["ai", "summary.list.5", /not an array/],
      ["ai", "summary.list.x", /no field/],
      ["ai", "summary.list.01", /no field/],
      ["ai", "summary.list.-1", /no field/],
      ["ai", "summary.list.99999999999", /no field/],
      ["ai", "summary.list.length", /not an array/],
      ["ai", "summary.list.length.x", /no field/],
      ["ai", "summary.n", /not an array/],
      ["ai", "text", /not an array/],
      ["ai", "nothing", /not an array/],
      ["ai", "nothing.x", /no field/],
      ["ai", "summary..list", /no field/],
      ["failed", "rows", /no field/],
    ];
    for (const [nodeId, field, message] of cases) {
      const res = await page(runId, nodeId, `?field=${encodeURIComponent(field)}`);
      expect(res.status, field).toBe(422);
      expect(res.body.detail, field).toMatch(message);
    }
  });

  it("pages an output that is not an object like before", async () => {
    expect((await page(runId, "weird", "")).body).toEqual({ items: [], total: 0 });
  });

  it("404 for an unknown node or another account's run", async () => {
    expect((await page(runId, "ghost", "")).status).toBe(404);
    const other = await createTestAccount();
    const res = await call(nodeOutputHandler, {
      path: `/api/workflows/runs/${runId}/nodes/src/output?field=rows`,
      token: other.token,
      params: { runId, nodeId: "src" },
    });
    expect(res.status).toBe(404);
    expect((await getRun(other.token, runId)).status).toBe(404);
  });
});
