// Large node outputs in pieces (db/queries/node-outputs.ts, issue 18): a top-level array of more than 1,000 elements is
// stored in node_output_chunks (2,000 elements a row), or as a reference when it is every row of an upload (a
// DATA_SOURCE's), and the node row keeps its first 101; every reader gets the same
// answers as when the whole output was one jsonb value: the run view's preview, the output pages (across piece
// boundaries, into an element), the engine reading an output back (a send reusing a preview's nodes), and retention.
import { sql } from "drizzle-orm";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { GET as nodeOutputHandler } from "@/app/api/workflows/runs/[runId]/nodes/[nodeId]/output/route";
import { POST as sendHandler } from "@/app/api/workflows/runs/[runId]/send/route";
import { execRows, getDb } from "@/db/client";
import { CHUNK_ITEMS, HEAD_ITEMS, isSmallOutput, SPILL_MIN_ITEMS } from "@/db/queries/node-outputs";
import { readUploadRows } from "@/db/queries/upload-rows";
import { nodeResults, runs } from "@/db/schema";
import type { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { forgetRunOutputs, loadOutputs, markNodeSucceeded } from "@/lib/engine/pg/node-store";
import { pruneExpired } from "@/lib/engine/pg/retention";
import { newId } from "@/lib/ids";
import { enqueueRun } from "@/lib/engine/pg/enqueue-run";
import { OUTPUT_PREVIEW_ITEMS } from "@/lib/services/runs/get-run";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";
import { fakeResendForRuns, filteredEmailGraph, getRun, insertUpload, insertWorkflow, startTestExecutor } from "./helpers";

const fixture = fakeResendForRuns();
let executor: EmbeddedExecutor;

beforeAll(() => {
  executor = startTestExecutor();
});
beforeEach(() => fixture.resend.reset());

const ROWS = 4_500;
const csvRows = (prefix: string) =>
  Array.from({ length: ROWS }, (_, i) => [`n${i}`, `${prefix}${i}@example.com`, String(i % 2)]);
const rowObject = (prefix: string, i: number) => ({ name: `n${i}`, email: `${prefix}${i}@example.com`, score: String(i % 2) });

const page = (token: string, runId: string, nodeId: string, query: string) =>
  call(nodeOutputHandler, { path: `/api/workflows/runs/${runId}/nodes/${nodeId}/output${query}`, token, params: { runId, nodeId } });

async function piecesOf(runId: string) {
  return execRows<{ node_id: string; field: string; seq: number; n: number }>(
    await getDb(),
    sql`select node_id, field, seq, json_array_length(items::json) as n from node_output_chunks where run_id = ${runId} order by node_id, field, seq`,
  );
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("large outputs in pieces", () => {
  it("the head stays previewable: HEAD_ITEMS is one past the run view's preview", () => {
    expect(HEAD_ITEMS).toBe(OUTPUT_PREVIEW_ITEMS + 1);
    expect(SPILL_MIN_ITEMS).toBeGreaterThanOrEqual(HEAD_ITEMS);
    expect(isSmallOutput({ rows: new Array(SPILL_MIN_ITEMS).fill(1) })).toBe(true);
    expect(isSmallOutput({ rows: new Array(SPILL_MIN_ITEMS + 1).fill(1) })).toBe(false);
  });

  it("a preview of 4,500 rows → FILTER stores pieces, previews and pages them; its send reads them back and sends each email once", async () => {
    const { id: accountId, token } = await createTestAccount();
    const uploadId = await insertUpload(accountId, ["name", "email", "score"], csvRows("piece"));
    const workflowId = await insertWorkflow(accountId, filteredEmailGraph(uploadId, 'score == "1"'));
    const { run } = await enqueueRun(accountId, workflowId, undefined, { mode: "preview" });
    await executor.idle();
    const preview = (await getRun(token, run.runId)).body;
    expect(preview.status).toBe("SUCCESS");

    // Stored: the filter's 2,250 items in 2 pieces; the source's rows, which are its upload's, as a reference to it.
    // Each row keeps the first 101 elements.
    expect(await piecesOf(run.runId)).toEqual([
      { node_id: "f", field: "items", seq: 0, n: CHUNK_ITEMS },
      { node_id: "f", field: "items", seq: 1, n: 250 },
    ]);
    const stored = await execRows<{ node_id: string; spilled: unknown; head: number }>(
      await getDb(),
      sql`select node_id, spilled, jsonb_array_length(coalesce(output->'rows', output->'items')) as head
          from node_results where run_id = ${run.runId} and node_id in ('src', 'f') order by node_id`,
    );
    expect(stored).toEqual([
      { node_id: "f", spilled: { items: { length: 2_250, chunkItems: CHUNK_ITEMS } }, head: HEAD_ITEMS },
      { node_id: "src", spilled: { rows: { length: ROWS, upload: uploadId } }, head: HEAD_ITEMS },
    ]);
    // Deleting the upload only marks it: the run keeps reading the rows it used.
    await (await getDb()).execute(sql`update uploads set deleted_at = now() where id = ${uploadId}`);

    // The run view: the first 100, cut, the counts whole.
    expect(preview.nodes.src.output).toEqual({
      rows: Array.from({ length: 100 }, (_, i) => rowObject("piece", i)),
      rowCount: ROWS,
      columns: ["name", "email", "score"],
    });
    expect(preview.nodes.src.outputTruncated).toBe(true);
    expect(preview.nodes.f.output).toMatchObject({ count: 2_250, filteredOut: 2_250 });
    expect(preview.nodes.f.output.items).toHaveLength(100);

    // Pages: across a piece boundary, at the end, past the end, with and without field.
    const across = await page(token, run.runId, "src", "?field=rows&offset=1990&limit=20");
    expect(across.status).toBe(200);
    expect(across.body.total).toBe(ROWS);
    expect(across.body.items).toEqual(Array.from({ length: 20 }, (_, i) => rowObject("piece", 1990 + i)));
    const last = await page(token, run.runId, "src", "?field=rows&offset=4490&limit=50");
    expect(last.body.items).toEqual(Array.from({ length: 10 }, (_, i) => rowObject("piece", 4490 + i)));
    expect((await page(token, run.runId, "src", "?field=rows&offset=4500&limit=5")).body).toEqual({ items: [], total: ROWS });
    // Without field: DATA_SOURCE has two arrays (rows, columns); FILTER's only one is paged from its pieces.
    expect((await page(token, run.runId, "src", "")).body.detail).toContain("several arrays (rows, columns)");
    const only = await page(token, run.runId, "f", "?offset=1999&limit=2");
    expect(only.body).toEqual({ items: [rowObject("piece", 3999), rowObject("piece", 4001)], total: 2_250 });
    const filtered = await page(token, run.runId, "f", "?field=items&offset=2240&limit=100");
    expect(filtered.body.total).toBe(2_250);
    expect(filtered.body.items.map((r: { name: string }) => r.name)).toEqual(Array.from({ length: 10 }, (_, i) => `n${2 * (2240 + i) + 1}`));

    // Paths into an element answer as they did on the whole output.
    const element = await page(token, run.runId, "src", "?field=rows.4321");
    expect(element.status).toBe(422);
    expect(element.body.detail).toBe('The output field "rows.4321" is not an array.');
    expect((await page(token, run.runId, "src", "?field=rows.length")).body.detail).toBe('The output field "rows.length" is not an array.');
    expect((await page(token, run.runId, "src", "?field=rows.4500")).body.detail).toBe('The output has no field "rows.4500".');
    expect((await page(token, run.runId, "src", "?field=rows.x")).body.detail).toBe('The output has no field "rows.x".');
    expect((await page(token, run.runId, "src", "?field=rows.4321.name")).body.detail).toBe('The output field "rows.4321.name" is not an array.');

    // Send the preview: its DATA_SOURCE and FILTER are reused (pieces copied), OUTPUT reads them back from the database.
    const send = await call(sendHandler, { method: "POST", path: `/api/workflows/runs/${run.runId}/send`, token, params: { runId: run.runId } });
    expect(send.status).toBe(202);
    const sendRunId = send.body.runId as string;
    const done = await waitFor("the send", async () => {
      await executor.idle();
      const view = (await getRun(token, sendRunId)).body;
      return view.status === "SUCCESS" || view.status === "FAILED" ? view : undefined;
    });
    expect(done.status).toBe("SUCCESS");
    expect(done.nodes.src).toMatchObject({ status: "SUCCESS", reused: true });
    expect(done.result).toMatchObject({ emailsSent: 2_250, totalRows: ROWS, filteredOut: 2_250 });
    expect((await piecesOf(sendRunId)).map((p) => [p.node_id, p.seq, p.n])).toEqual([
      ["f", 0, CHUNK_ITEMS],
      ["f", 1, 250],
    ]);
    const page2 = await page(token, sendRunId, "src", "?field=rows&offset=4498&limit=10");
    expect(page2.body).toEqual({ items: [rowObject("piece", 4498), rowObject("piece", 4499)], total: ROWS });
    const to = fixture.resend.emails().flatMap((e) => e.to);
    expect(to).toHaveLength(2_250);
    expect(new Set(to)).toEqual(new Set(Array.from({ length: 2_250 }, (_, i) => `piece${2 * i + 1}@example.com`)));

    // Retention drops the pieces with the outputs.
    const report = await pruneExpired(await getDb(), { retentionDays: 1, now: new Date(Date.now() + 3 * 86_400_000) });
    expect(report.runsExpired).toBeGreaterThanOrEqual(2);
    expect(await piecesOf(run.runId)).toEqual([]);
    expect(await piecesOf(sendRunId)).toEqual([]);
  });

  it("an output written again (a resumed node) replaces its pieces; read back whole from the database, __proto__ kept", async () => {
    const { id: accountId, token } = await createTestAccount();
    const db = await getDb();
    const workflowId = await insertWorkflow(accountId, { nodes: [{ id: "a", type: "AI", data: {} }], edges: [] });
    const runId = newId("run");
    await db.insert(runs).values({ id: runId, workflowId, accountId, workflowVersion: 1, graph: { nodes: [{ id: "a", type: "AI", data: {} }], edges: [] }, status: "RUNNING" });
    await db.insert(nodeResults).values({ runId, nodeId: "a", type: "AI", status: "RUNNING" });
    const list = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ i, tag, tags: [tag, i] }));
    const first = { list: list(5_000, "first"), other: list(1_500, "o"), note: "x" };
    await markNodeSucceeded(db, runId, "a", { output: first, logMessages: [] });
    expect((await piecesOf(runId)).length).toBe(3 + 1);

    const again = JSON.parse('{"__proto__": {"kept": true}, "list": [], "n": 1}') as Record<string, unknown>;
    again.list = list(2_500, "again");
    await markNodeSucceeded(db, runId, "a", { output: again, logMessages: [] });
    expect((await piecesOf(runId)).map((p) => [p.field, p.seq, p.n])).toEqual([
      ["list", 0, CHUNK_ITEMS],
      ["list", 1, 500],
    ]);

    const tags = await page(token, runId, "a", "?field=list.2400.tags");
    expect(tags.body).toEqual({ items: ["again", 2400], total: 2 });

    forgetRunOutputs(runId);
    const read = (await loadOutputs(db, runId, ["a"])).get("a")!;
    expect(Object.keys(read).sort()).toEqual(["__proto__", "list", "n"]); // jsonb orders keys its own way
    expect(Object.getOwnPropertyDescriptor(read, "__proto__")?.value).toEqual({ kept: true });
    expect(read.list).toEqual(list(2_500, "again"));
    expect(read.n).toBe(1);
  });

  it("every row of an upload is stored as a reference to it and read back whole; a slice of it is stored in pieces", async () => {
    const { id: accountId } = await createTestAccount();
    const db = await getDb();
    const columns = ["name", "email", "score"];
    const uploadId = await insertUpload(accountId, columns, csvRows("ref").slice(0, 3_000));
    const workflowId = await insertWorkflow(accountId, { nodes: [{ id: "src", type: "DATA_SOURCE", data: { uploadId } }], edges: [] });
    const runId = newId("run");
    await db.insert(runs).values({ id: runId, workflowId, accountId, workflowVersion: 1, graph: { nodes: [], edges: [] }, status: "SUCCESS" });
    await db.insert(nodeResults).values([
      { runId, nodeId: "whole", type: "DATA_SOURCE", status: "RUNNING" },
      { runId, nodeId: "part", type: "DATA_SOURCE", status: "RUNNING" },
    ]);
    const whole = await readUploadRows(db, { id: uploadId, columns, rowCount: 3_000 }, 0, 3_000);
    await markNodeSucceeded(db, runId, "whole", { output: { rows: whole, rowCount: 3_000, columns }, logMessages: [] });
    const part = await readUploadRows(db, { id: uploadId, columns, rowCount: 3_000 }, 1, 2_500);
    await markNodeSucceeded(db, runId, "part", { output: { rows: part, rowCount: 2_500, columns }, logMessages: [] });
    expect((await piecesOf(runId)).map((p) => [p.node_id, p.seq, p.n])).toEqual([
      ["part", 0, CHUNK_ITEMS],
      ["part", 1, 500],
    ]);
    forgetRunOutputs(runId);
    const read = await loadOutputs(db, runId, ["whole", "part"]);
    expect(read.get("whole")!.rows).toEqual(Array.from({ length: 3_000 }, (_, i) => rowObject("ref", i)));
    expect(read.get("part")!.rows).toEqual(Array.from({ length: 2_500 }, (_, i) => rowObject("ref", i + 1)));
    expect(read.get("whole")!.columns).toEqual(columns);
  });
});
