import { afterAll, beforeAll } from "vitest";
import { getDb } from "@/db/client";
import { uploadChunks, uploads, workflows } from "@/db/schema";
import { EmbeddedExecutor, startEmbeddedExecutor, stopEmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { newId } from "@/lib/ids";
import { POST as enqueueHandler } from "@/app/api/workflows/[workflowId]/run/route";
import { GET as getRunHandler } from "@/app/api/workflows/runs/[runId]/route";
import { clearResendTransport, startFakeResend, useResendTransport, type FakeResend } from "@/test/support/fake-resend";
import { call } from "@/test/support/http";

/** An upload inserted directly (rows in chunks, as the uploads module stores them). */
export async function insertUpload(accountId: string, columns: string[], rows: string[][], chunkSize = 1000): Promise<string> {
  const db = await getDb();
  const id = newId("upl");
  await db.insert(uploads).values({ id, accountId, filename: "data.csv", rowCount: rows.length, columns, sizeBytes: 1 });
  for (let c = 0; c * chunkSize < rows.length; c++) {
    const chunk = rows.slice(c * chunkSize, (c + 1) * chunkSize);
    await db.insert(uploadChunks).values({ uploadId: id, chunkIndex: c, firstRow: c * chunkSize, rowCount: chunk.length, rows: chunk });
  }
  return id;
}

export type TestGraph = {
  nodes: { id: string; type: string; data: Record<string, unknown> }[];
  edges: { source: string; target: string; condition?: string }[];
};

export async function insertWorkflow(accountId: string, graph: TestGraph, name = "Test workflow"): Promise<string> {
  const db = await getDb();
  const id = newId("wf");
  await db.insert(workflows).values({ id, accountId, name, graph, version: 1 });
  return id;
}

/** The process-wide embedded executor (the one enqueue pokes), with a slow sweep so tests drive it by events. */
export function startTestExecutor(concurrency = 4): EmbeddedExecutor {
  return startEmbeddedExecutor({ getDb, concurrency, sweepIntervalMs: 3_600_000 });
}

export const stopTestExecutor = stopEmbeddedExecutor;

/**
 * Call at the top level of a file whose runs send email: a fake Resend is the transport during its tests; after
 * them the test executor is stopped, the fake closed and the transport cleared.
 */
export function fakeResendForRuns(): { readonly resend: FakeResend } {
  let resend: FakeResend | undefined;
  beforeAll(async () => {
    resend = await startFakeResend();
    useResendTransport(resend.url);
  });
  afterAll(async () => {
    await stopTestExecutor();
    await resend?.close();
    clearResendTransport();
  });
  return {
    get resend() {
      if (!resend) throw new Error("the fake Resend starts in beforeAll");
      return resend;
    },
  };
}

export async function enqueue(token: string, workflowId: string, headers: Record<string, string> = {}) {
  return call(enqueueHandler, { method: "POST", path: `/api/workflows/${workflowId}/run`, token, params: { workflowId }, headers });
}

export async function getRun(token: string, runId: string, query = "") {
  return call(getRunHandler, { path: `/api/workflows/runs/${runId}${query}`, token, params: { runId } });
}

/** Enqueue → the executor works until idle → the finished run. */
export async function runToEnd(executor: EmbeddedExecutor, token: string, workflowId: string) {
  const res = await enqueue(token, workflowId);
  if (res.status !== 202) throw new Error(`enqueue answered ${res.status}: ${res.text}`);
  await executor.idle();
  return (await getRun(token, res.body.runId)).body;
}

export const trigger = { id: "t", type: "TRIGGER", data: {} };

/** TRIGGER → DATA_SOURCE (the upload) → FILTER `f` (`expr` on each row) → OUTPUT: one email to every kept row's `email`. */
export const filteredEmailGraph = (uploadId: string, expr: string, email: { subject: string; body: string } = { subject: "s", body: "b" }): TestGraph => ({
  nodes: [
    trigger,
    { id: "src", type: "DATA_SOURCE", data: { uploadId } },
    { id: "f", type: "FILTER", data: { source: "{{src.rows}}", expr } },
    { id: "out", type: "OUTPUT", data: { forEach: "{{f.items}}", to: "{{item.email}}", ...email } },
  ],
  edges: [
    { source: "t", target: "src" },
    { source: "src", target: "f" },
    { source: "f", target: "out" },
  ],
});

/** TRIGGER → DATA_SOURCE (the upload) → OUTPUT: one email to every row's `email`. */
export const emailEveryRowGraph = (uploadId: string, email: { subject: string; body: string } = { subject: "s", body: "b" }): TestGraph => ({
  nodes: [
    trigger,
    { id: "src", type: "DATA_SOURCE", data: { uploadId } },
    { id: "out", type: "OUTPUT", data: { forEach: "{{src.rows}}", to: "{{item.email}}", ...email } },
  ],
  edges: [
    { source: "t", target: "src" },
    { source: "src", target: "out" },
  ],
});

/** An account's emailEveryRowGraph over an upload of one `email` column with `count` rows. */
export async function emailEveryRowWorkflow(accountId: string, count: number, addressPrefix: string) {
  const rows = Array.from({ length: count }, (_, i) => [`${addressPrefix}${i}@example.com`]);
  const uploadId = await insertUpload(accountId, ["email"], rows);
  const workflowId = await insertWorkflow(accountId, emailEveryRowGraph(uploadId));
  return { workflowId, addresses: rows.map((r) => r[0]) };
}
