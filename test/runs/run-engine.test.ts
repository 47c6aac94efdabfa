import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { accounts, uploads, workflows } from "@/db/schema";
import { aiCallPolicy } from "@/lib/ai/generate";
import { aiItemPolicy } from "@/lib/nodes/ai/run-items";
import { encryptSecret } from "@/lib/crypto";
import type { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { simulateRun } from "@/lib/graph/plan";
import type { Graph } from "@/lib/graph/schema";
import { createTestAccount } from "@/test/support/accounts";
import { startFakeOpenAI, type FakeOpenAI } from "@/test/support/fake-openai";
import { clearResendTransport, startFakeResend, useResendTransport, type FakeResend } from "@/test/support/fake-resend";
import { emailEveryRowGraph, enqueue, getRun, insertUpload, insertWorkflow, runToEnd, startTestExecutor, stopTestExecutor, type TestGraph, trigger } from "./helpers";

let resend: FakeResend;
let ai: FakeOpenAI;
let executor: EmbeddedExecutor;

beforeAll(async () => {
  resend = await startFakeResend();
  ai = await startFakeOpenAI();
  useResendTransport(resend.url);
  executor = startTestExecutor();
});

afterAll(async () => {
  await stopTestExecutor();
  await resend.close();
  await ai.close();
  clearResendTransport();
});

beforeEach(() => resend.reset());

const people = [
  ["Ann", "ann@example.com", "5"],
  ["Bob", "bob@example.com", "2"],
  ["Cy", "cy@example.com", "4"],
];

const statusesOf = (run: { nodes: Record<string, { status: string }> }) =>
  Object.fromEntries(Object.entries(run.nodes).map(([id, n]) => [id, n.status]));

/** src → a (condition) / b (negated) → join OUTPUT. */
function ifElseGraph(uploadId: string, joinForEach: string): TestGraph {
  return {
    nodes: [
      trigger,
      { id: "src", type: "DATA_SOURCE", data: { uploadId } },
      { id: "a", type: "FILTER", data: { source: "{{src.rows}}", expr: "rating >= 4" } },
      { id: "b", type: "FILTER", data: { source: "{{src.rows}}", expr: "rating < 4" } },
      { id: "join", type: "OUTPUT", data: { forEach: joinForEach, to: "{{item.email}}", subject: "Hi {{item.name}}", body: "b" } },
    ],
    edges: [
      { source: "t", target: "src" },
      { source: "src", target: "a", condition: "src.rowCount > 100" },
      { source: "src", target: "b", condition: "not (src.rowCount > 100)" },
      { source: "a", target: "join" },
      { source: "b", target: "join" },
    ],
  };
}

describe("node failures", () => {
  it("fails the node with an actionable sentence, skips everything after it, and lets the queue continue", async () => {
    const { id, token } = await createTestAccount();
    const uploadId = await insertUpload(id, ["name", "email", "rating"], people);
    const bad: TestGraph = {
      nodes: [
        trigger,
        { id: "src", type: "DATA_SOURCE", data: { uploadId } },
        { id: "f1", type: "FILTER", data: { source: "{{src.rows}}", expr: "ratng >= 4" } },
        { id: "out", type: "OUTPUT", data: { forEach: "{{f1.items}}", to: "{{item.email}}", subject: "s", body: "b" } },
      ],
      edges: [
        { source: "t", target: "src" },
        { source: "src", target: "f1" },
        { source: "f1", target: "out" },
      ],
    };
    const workflowId = await insertWorkflow(id, bad);
    const first = await enqueue(token, workflowId);
    // The next run of the same workflow uses the fixed graph (runs snapshot the graph when enqueued).
    const fixed = structuredClone(bad);
    fixed.nodes[2].data.expr = "rating >= 4";
    await (await getDb()).update(workflows).set({ graph: fixed, version: 2 }).where(eq(workflows.id, workflowId));
    const second = await enqueue(token, workflowId);
    await executor.idle();

    const failed = (await getRun(token, first.body.runId)).body;
    expect(failed.status).toBe("FAILED");
    expect(statusesOf(failed)).toEqual({ t: "SUCCESS", src: "SUCCESS", f1: "FAILED", out: "SKIPPED" });
    expect(failed.nodes.f1.error).toMatch(/item 0/);
    expect(failed.nodes.f1.error).toMatch(/ratng/);
    expect(failed.error).toMatch(/^Node "f1" failed: /);
    expect(failed.result).toEqual({ emailsSent: 0, filteredOut: 0, totalRows: 3, suppressed: 0, duplicates: 0 });
    expect(failed.logs.some((l: { level: string; nodeId?: string }) => l.level === "error" && l.nodeId === "f1")).toBe(true);

    const ok = (await getRun(token, second.body.runId)).body;
    expect(ok.status).toBe("SUCCESS");
    expect(ok.workflowVersion).toBe(2);
    expect(new Date(ok.startedAt).getTime()).toBeGreaterThanOrEqual(new Date(failed.completedAt).getTime());
    expect(resend.emails().map((e) => e.to[0])).toEqual(["ann@example.com", "cy@example.com"]);
  });

  it("fails a DATA_SOURCE whose upload was deleted", async () => {
    const { id, token } = await createTestAccount();
    const uploadId = await insertUpload(id, ["email"], [["a@example.com"]]);
    const workflowId = await insertWorkflow(id, ifElseGraph(uploadId, "{{b.items}}"));
    await (await getDb()).update(uploads).set({ deletedAt: new Date() }).where(eq(uploads.id, uploadId));
    const run = await runToEnd(executor, token, workflowId);
    expect(run.status).toBe("FAILED");
    expect(run.nodes.src.error).toContain(`Upload ${uploadId} no longer exists`);
    expect(run.error).toContain(`Node "src" failed: Upload ${uploadId} no longer exists`);
    expect(statusesOf(run)).toEqual({ t: "SUCCESS", src: "FAILED", a: "SKIPPED", b: "SKIPPED", join: "SKIPPED" });
  });

  it("refuses every email when one cannot be rendered (a bad address, a line break)", async () => {
    const { id, token } = await createTestAccount();
    const uploadId = await insertUpload(id, ["name", "email"], [
      ["Ann", "ann@example.com"],
      ["Bob", "not-an-address"],
      ["Eve", "eve@example.com\r\nBcc: victim@example.com"],
    ]);
    const workflowId = await insertWorkflow(id, emailEveryRowGraph(uploadId, { subject: "Hi {{item.name}}", body: "x" }));
    const run = await runToEnd(executor, token, workflowId);
    expect(run.status).toBe("FAILED");
    expect(run.nodes.out.error).toMatch(/^2 of 3 emails could not be rendered, so none was sent/);
    expect(run.nodes.out.error).toContain("item 1");
    expect(run.nodes.out.error).toContain("item 2");
    expect(resend.emails()).toHaveLength(0);
  });
});

describe("conditional branching", () => {
  it("runs the join of an if/else after the branch taken, as the reference semantics say", async () => {
    const { id, token } = await createTestAccount();
    const uploadId = await insertUpload(id, ["name", "email", "rating"], people);
    const graph = ifElseGraph(uploadId, "{{b.items}}");
    const run = await runToEnd(executor, token, await insertWorkflow(id, graph));
    expect(run.status).toBe("SUCCESS");
    const expected = simulateRun(graph as Graph, { conditions: { "src->a": false, "src->b": true } });
    expect(statusesOf(run)).toEqual({ ...expected });
    expect(statusesOf(run)).toMatchObject({ a: "SKIPPED", b: "SUCCESS", join: "SUCCESS" });
    expect(resend.emails().map((e) => e.subject)).toEqual(["Hi Bob"]);
  });

  it("fails a join whose template names the skipped branch, logs why, and sends nothing", async () => {
    const { id, token } = await createTestAccount();
    const uploadId = await insertUpload(id, ["name", "email", "rating"], people);
    const run = await runToEnd(executor, token, await insertWorkflow(id, ifElseGraph(uploadId, "{{a.items}}")));
    expect(run.status).toBe("FAILED");
    expect(run.nodes.join.status).toBe("FAILED");
    expect(run.nodes.join.error).toContain('needs node "a", which was SKIPPED');
    expect(run.error).toMatch(/^Node "join" failed: /);
    const errorLog = run.logs.find((l: { level: string; nodeId?: string }) => l.level === "error" && l.nodeId === "join");
    expect(errorLog.message).toContain('"a"');
    expect(resend.emails()).toHaveLength(0);
  });
});

describe("AI nodes (real AI SDK against a local OpenAI-compatible server)", () => {
  async function accountWithAi(key = "sk-test-1234") {
    const account = await createTestAccount();
    await (await getDb())
      .update(accounts)
      .set({ aiProvider: "openai-compatible", aiModel: "fake-model", aiBaseUrl: ai.url, aiKeyEncrypted: encryptSecret(key), aiKeyLast4: key.slice(-4) })
      .where(eq(accounts.id, account.id));
    return account;
  }

  const aiGraph = (uploadId: string): TestGraph => ({
    nodes: [
      trigger,
      { id: "src", type: "DATA_SOURCE", data: { uploadId } },
      {
        id: "ai",
        type: "AI",
        data: {
          prompt: "Pick the happy customers among {{src.rows}}",
          system: "You are terse.",
          output: [
            { name: "people", type: "array", description: "objects with email and name" },
            { name: "summary", type: "string" },
          ],
        },
      },
      { id: "out", type: "OUTPUT", data: { forEach: "{{ai.people}}", to: "{{item.email}}", subject: "{{ai.summary}}", body: "Dear {{item.name}}" } },
    ],
    edges: [
      { source: "t", target: "src" },
      { source: "src", target: "ai" },
      { source: "ai", target: "out" },
    ],
  });

  it("produces an array that an OUTPUT forEach sends one email per element of, after retrying a 500", async () => {
    const { id, token } = await accountWithAi();
    const uploadId = await insertUpload(id, ["name", "email", "rating"], people);
    ai.failNext(1, 500);
    ai.answer(() => ({
      people: [
        { email: "ann@example.com", name: "Ann" },
        { email: "cy@example.com", name: "Cy" },
      ],
      summary: "Thank you!",
    }));
    const before = ai.requests.length;
    const run = await runToEnd(executor, token, await insertWorkflow(id, aiGraph(uploadId)));
    expect(run.status).toBe("SUCCESS");
    expect(run.nodes.ai.output).toEqual({
      people: [
        { email: "ann@example.com", name: "Ann" },
        { email: "cy@example.com", name: "Cy" },
      ],
      summary: "Thank you!",
      usage: { calls: 1, inputTokens: 10, outputTokens: 10, costUsd: null },
    });
    expect(resend.emails().map((e) => [e.to[0], e.subject, e.text])).toEqual([
      ["ann@example.com", "Thank you!", "Dear Ann"],
      ["cy@example.com", "Thank you!", "Dear Cy"],
    ]);
    const calls = ai.requests.slice(before);
    expect(calls).toHaveLength(2); // the 500, then the retry
    const request = calls[1];
    expect(request.model).toBe("fake-model");
    expect(request.messages[0]).toMatchObject({ role: "system", content: "You are terse." });
    expect(JSON.stringify(request.messages)).toContain("ann@example.com");
    const schema = request.response_format?.json_schema?.schema as { properties: Record<string, { type: string }>; required: string[] };
    expect(schema.properties.people.type).toBe("array");
    expect(schema.properties.summary.type).toBe("string");
    expect(schema.required).toEqual(["people", "summary"]);
  });

  it("fails when the answer does not match the declared outputs", async () => {
    const { id, token } = await accountWithAi();
    const uploadId = await insertUpload(id, ["name", "email", "rating"], people);
    ai.answer(() => ({ people: "not a list", summary: 3 }));
    const run = await runToEnd(executor, token, await insertWorkflow(id, aiGraph(uploadId)));
    expect(run.status).toBe("FAILED");
    expect(run.nodes.ai.error).toMatch(/did not match the declared outputs/);
    expect(run.nodes.out.status).toBe("SKIPPED");
  });

  it("waits out a provider that does not answer within the timeout, then fails when the AI budget is spent", async () => {
    const { id, token } = await accountWithAi();
    const uploadId = await insertUpload(id, ["name", "email", "rating"], people);
    const saved = aiCallPolicy.timeoutMs;
    const policy = { ...aiItemPolicy };
    aiCallPolicy.timeoutMs = 500;
    Object.assign(aiItemPolicy, { budgetMs: 1_200, backoffMs: 10, maxBackoffMs: 20 });
    ai.hangNext(100);
    try {
      const before = ai.requests.length;
      const run = await runToEnd(executor, token, await insertWorkflow(id, aiGraph(uploadId)));
      expect(run.status).toBe("FAILED");
      expect(run.nodes.ai.error).toMatch(/^The AI provider kept failing for .* \(AI_BUDGET_MINUTES; last answer: The AI provider did not answer within 0.5 s\): 0 of 1 items are done/);
      expect(ai.requests.length - before).toBeGreaterThanOrEqual(2); // asked again before giving up
    } finally {
      aiCallPolicy.timeoutMs = saved;
      Object.assign(aiItemPolicy, policy);
      ai.hangNext(0);
    }
  });

  it("fails with a clear sentence when the account has no AI key", async () => {
    const { id, token } = await createTestAccount();
    const uploadId = await insertUpload(id, ["name", "email", "rating"], people);
    const run = await runToEnd(executor, token, await insertWorkflow(id, aiGraph(uploadId)));
    expect(run.status).toBe("FAILED");
    expect(run.nodes.ai.error).toMatch(/^AI provider key not configured/);
    expect(run.error).toMatch(/^Node "ai" failed: AI provider key not configured/);
  });
});

describe("email provider errors", () => {
  it("retries a 429 honouring Retry-After, then sends each email once", async () => {
    const { id, token } = await createTestAccount();
    const uploadId = await insertUpload(id, ["name", "email", "rating"], people);
    const workflowId = await insertWorkflow(id, ifElseGraph(uploadId, "{{b.items}}"));
    resend.failNext(1, 429, 1);
    const started = Date.now();
    const run = await runToEnd(executor, token, workflowId);
    expect(run.status).toBe("SUCCESS");
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    const batches = resend.requests.filter((r) => r.path === "/emails/batch");
    expect(batches.map((r) => r.status)).toEqual([429, 200]);
    expect(batches[0].headers["idempotency-key"]).toBe(batches[1].headers["idempotency-key"]);
    expect(resend.emails()).toHaveLength(1);
    expect(run.result.emailsSent).toBe(1);
  });

  it("fails the node with the provider's message on a non-retryable error", async () => {
    const { id, token } = await createTestAccount();
    const uploadId = await insertUpload(id, ["name", "email", "rating"], people);
    resend.failNext(1, 422);
    const run = await runToEnd(executor, token, await insertWorkflow(id, ifElseGraph(uploadId, "{{b.items}}")));
    expect(run.status).toBe("FAILED");
    expect(run.nodes.join.error).toMatch(/^The email provider refused the emails: Resend 422/);
  });
});
