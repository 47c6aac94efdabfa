import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { resetConfig } from "@/lib/config";
import { GET as listRunsHandler } from "@/app/api/workflows/[workflowId]/runs/route";
import { GET as nodeOutputHandler } from "@/app/api/workflows/runs/[runId]/nodes/[nodeId]/output/route";
import type { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";
import { enqueue, fakeResendForRuns, filteredEmailGraph, getRun, insertUpload, insertWorkflow, runToEnd, startTestExecutor } from "./helpers";

const fixture = fakeResendForRuns();
let executor: EmbeddedExecutor;

beforeAll(() => {
  executor = startTestExecutor();
});

beforeEach(() => fixture.resend.reset());

const reviewsGraph = (uploadId: string, expr = "rating >= 4") =>
  filteredEmailGraph(uploadId, expr, { subject: "Thanks {{item.name}}", body: "You rated us {{item.rating}}/5." });

describe("the spec's lifecycle: upload → workflow → run → poll → SUCCESS", () => {
  it("sends exactly the right emails with the right rendered text", async () => {
    const { id, token } = await createTestAccount();
    const uploadId = await insertUpload(id, ["name", "email", "rating"], [
      ["Ann", "ann@example.com", "5"],
      ["Bob", "bob@example.com", "2"],
      ["Cy", "cy@example.com", "4"],
    ]);
    const workflowId = await insertWorkflow(id, reviewsGraph(uploadId));

    const res = await enqueue(token, workflowId);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ workflowId, status: "PENDING" });
    expect(res.body.runId).toMatch(/^run_/);
    expect(res.headers.get("location")).toBe(`/api/workflows/runs/${res.body.runId}`);
    expect(res.headers.get("ratelimit-limit")).toBe("60");
    expect(new Date(res.body.enqueuedAt).toISOString()).toBe(res.body.enqueuedAt);

    await executor.idle();
    const run = (await getRun(token, res.body.runId)).body;
    expect(run.status).toBe("SUCCESS");
    expect(run.result).toEqual({ emailsSent: 2, filteredOut: 1, totalRows: 3, suppressed: 0, duplicates: 0 });
    expect(run.error).toBeUndefined();
    expect(Object.keys(run.nodes)).toEqual(["t", "src", "f", "out"]);
    expect(run.nodes.t).toMatchObject({ type: "TRIGGER", status: "SUCCESS", output: {}, error: null });
    expect(run.nodes.f.output).toMatchObject({ count: 2, filteredOut: 1 });
    expect(run.nodes.out).toMatchObject({ status: "SUCCESS", output: { emailsSent: 2 }, itemsIn: 2, itemsOut: 2 });
    expect(run.startedAt).not.toBeNull();
    expect(run.completedAt).not.toBeNull();
    expect(run.logs.some((l: { message: string }) => l.message.startsWith("Run succeeded"))).toBe(true);

    const sent = fixture.resend.emails().map((e) => ({ to: e.to, subject: e.subject, text: e.text }));
    expect(sent).toEqual([
      { to: ["ann@example.com"], subject: "Thanks Ann", text: "You rated us 5/5." },
      { to: ["cy@example.com"], subject: "Thanks Cy", text: "You rated us 4/5." },
    ]);
    const batch = fixture.resend.requests.find((r) => r.path === "/emails/batch");
    expect(batch?.headers["idempotency-key"]).toBe(`${res.body.runId}:out:batch:0:2`);
  });

  it("gives the array form, truncated outputs with the output endpoint, the run list, and 404 to other accounts", async () => {
    const { id, token } = await createTestAccount();
    const rows = Array.from({ length: 250 }, (_, i) => [`n${i}`, `p${i}@example.com`, String(i % 5)]);
    const uploadId = await insertUpload(id, ["name", "email", "rating"], rows, 100);
    const workflowId = await insertWorkflow(id, reviewsGraph(uploadId, "rating >= 2"));
    const run = await runToEnd(executor, token, workflowId);
    expect(run.status).toBe("SUCCESS");
    expect(run.result).toEqual({ emailsSent: 150, filteredOut: 100, totalRows: 250, suppressed: 0, duplicates: 0 });
    // 100 emails per batch call, each email once.
    expect(fixture.resend.requests.filter((r) => r.path === "/emails/batch").map((r) => (r.body as unknown[]).length).sort((a, b) => b - a)).toEqual([100, 50]);
    expect(new Set(fixture.resend.emails().map((e) => e.to[0])).size).toBe(150);
    expect(run.nodes.src.outputTruncated).toBe(true);
    expect(run.nodes.src.output.rows).toHaveLength(100);
    expect(run.nodes.src.output.rowCount).toBe(250);

    const arrayForm = (await getRun(token, run.runId, "?nodes=array")).body;
    expect(arrayForm.nodes.map((n: { id: string; type: string }) => [n.id, n.type])).toEqual([
      ["t", "TRIGGER"],
      ["src", "DATA_SOURCE"],
      ["f", "FILTER"],
      ["out", "OUTPUT"],
    ]);

    const page = await call(nodeOutputHandler, {
      path: `/api/workflows/runs/${run.runId}/nodes/src/output?field=rows&offset=240&limit=20`,
      token,
      params: { runId: run.runId, nodeId: "src" },
    });
    expect(page.status).toBe(200);
    expect(page.body.total).toBe(250);
    expect(page.body.items.map((r: { name: string }) => r.name)).toEqual(Array.from({ length: 10 }, (_, i) => `n${240 + i}`));

    const list = await call(listRunsHandler, { path: `/api/workflows/${workflowId}/runs?status=SUCCESS`, token, params: { workflowId } });
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(1);
    expect(list.body.items[0]).toMatchObject({ runId: run.runId, status: "SUCCESS" });
    expect(list.body.items[0].nodes).toBeUndefined();

    const other = await createTestAccount();
    expect((await getRun(other.token, run.runId)).status).toBe(404);
    expect((await enqueue(other.token, workflowId)).status).toBe(404);
    const otherList = await call(listRunsHandler, { path: `/api/workflows/${workflowId}/runs`, token: other.token, params: { workflowId } });
    expect(otherList.status).toBe(404);
    expect(otherList.body.code).toBe("not_found");
  });

  it("answers the same run for a repeated Idempotency-Key", async () => {
    const { id, token } = await createTestAccount();
    const uploadId = await insertUpload(id, ["name", "email", "rating"], [["Ann", "ann@example.com", "5"]]);
    const workflowId = await insertWorkflow(id, reviewsGraph(uploadId));
    const first = await enqueue(token, workflowId, { "Idempotency-Key": "abc-123" });
    const second = await enqueue(token, workflowId, { "Idempotency-Key": "abc-123" });
    const third = await enqueue(token, workflowId, { "Idempotency-Key": "other" });
    expect(second.status).toBe(202);
    expect(second.body.runId).toBe(first.body.runId);
    expect(third.body.runId).not.toBe(first.body.runId);
    await executor.idle();
    expect(fixture.resend.emails()).toHaveLength(2);
  });

  it("rate-limits enqueues per account with 429, Retry-After and RateLimit-* headers", async () => {
    process.env.RUN_RATE_LIMIT_PER_MINUTE = "2";
    resetConfig();
    try {
      const { id, token } = await createTestAccount();
      const uploadId = await insertUpload(id, ["name", "email", "rating"], [["Ann", "ann@example.com", "1"]]);
      const workflowId = await insertWorkflow(id, reviewsGraph(uploadId));
      // Six calls: even if a minute boundary falls among them, one window sees more than two.
      const answers = [];
      for (let i = 0; i < 6; i++) answers.push(await enqueue(token, workflowId));
      const limited = answers.find((a) => a.status === 429);
      expect(limited).toBeDefined();
      expect(limited!.body.code).toBe("rate_limited");
      expect(limited!.headers.get("content-type")).toContain("application/problem+json");
      expect(Number(limited!.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(limited!.headers.get("ratelimit-limit")).toBe("2");
      expect(limited!.headers.get("ratelimit-remaining")).toBe("0");
      expect(answers[0].status).toBe(202);
      expect(answers[0].headers.get("ratelimit-remaining")).toBe("1");
      await executor.idle();
    } finally {
      delete process.env.RUN_RATE_LIMIT_PER_MINUTE;
      resetConfig();
    }
  });
});
