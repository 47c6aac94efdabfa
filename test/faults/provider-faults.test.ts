/**
 * Faults of the outside services a run depends on, with the real SDKs against local fakes and the process-wide
 * embedded executor (runs enqueued through the real route handler):
 * - the email provider answers 429 or 500 on ~20 % of its calls → the run still succeeds with exactly N emails;
 * - the AI provider never answers → the AI node fails with a clear sentence after the (shortened) timeout, and the
 *   workflow's next run still runs.
 */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { accounts } from "@/db/schema";
import { aiCallPolicy } from "@/lib/ai/generate";
import { aiItemPolicy } from "@/lib/nodes/ai/run-items";
import { encryptSecret } from "@/lib/crypto";
import type { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { retryPolicy } from "@/lib/nodes/output/send-with-retry";
import { createTestAccount } from "@/test/support/accounts";
import { startFakeOpenAI, type FakeOpenAI } from "@/test/support/fake-openai";
import { clearResendTransport, startFakeResend, useResendTransport, type FakeResend } from "@/test/support/fake-resend";
import { emailEveryRowWorkflow, enqueue, getRun, insertWorkflow, runToEnd, startTestExecutor, stopTestExecutor, trigger } from "@/test/runs/helpers";

let resend: FakeResend;
let ai: FakeOpenAI;
let executor: EmbeddedExecutor;
const savedRetry = { ...retryPolicy };
const savedAi = { ...aiCallPolicy };

beforeAll(async () => {
  resend = await startFakeResend();
  ai = await startFakeOpenAI();
  useResendTransport(resend.url);
  executor = startTestExecutor(4);
  // Same policy, shorter waits: the test checks that failures are retried, not how long the backoff is.
  Object.assign(retryPolicy, { baseDelayMs: 5, maxDelayMs: 40, maxAttempts: 12 });
});

afterAll(async () => {
  await stopTestExecutor();
  Object.assign(retryPolicy, savedRetry);
  Object.assign(aiCallPolicy, savedAi);
  await resend.close();
  await ai.close();
  clearResendTransport();
});

describe("an email provider failing ~20 % of its calls", () => {
  const N = 1000;

  it.each([429, 500])("answering %i: the run succeeds with exactly N emails, each once", async (status) => {
    resend.reset();
    const { id, token } = await createTestAccount();
    const { workflowId, addresses } = await emailEveryRowWorkflow(id, N, `r${status}-`);
    resend.failNext(2, status); // at least these two failures, whatever the dice say
    resend.setFailureRatio(0.2, status);
    try {
      const run = await runToEnd(executor, token, workflowId);
      expect(run.status).toBe("SUCCESS");
      expect(run.result.emailsSent).toBe(N);
    } finally {
      resend.setFailureRatio(0);
    }
    const failed = resend.requests.filter((r) => r.status === status).length;
    expect(failed).toBeGreaterThanOrEqual(2); // the faults really happened
    const emails = resend.emails();
    expect(emails).toHaveLength(N);
    expect(new Set(emails.map((e) => e.to[0]))).toEqual(new Set(addresses));
    expect(new Set(emails.map((e) => e.idempotencyKey)).size).toBe(N / 100);
  });
});

describe("an AI provider that never answers", () => {
  it("waits a hung call out within the AI budget, then fails the node with a clear sentence; the workflow's next run still runs", async () => {
    const { id, token } = await createTestAccount();
    const key = "sk-test-5678";
    await (await getDb())
      .update(accounts)
      .set({ aiProvider: "openai-compatible", aiModel: "fake-model", aiBaseUrl: ai.url, aiKeyEncrypted: encryptSecret(key), aiKeyLast4: key.slice(-4) })
      .where(eq(accounts.id, id));
    const workflowId = await insertWorkflow(id, {
      nodes: [trigger, { id: "ai", type: "AI", data: { prompt: "Write a greeting", output: [{ name: "greeting", type: "string" }] } }],
      edges: [{ source: "t", target: "ai" }],
    });
    aiCallPolicy.timeoutMs = 300; // the injectable knob of lib/ai/generate.ts (60 s in production)
    const savedItem = { ...aiItemPolicy };
    // AI_BUDGET_MINUTES shortened: timeouts are waited out (with backoff) for 2 s before the node fails.
    Object.assign(aiItemPolicy, { budgetMs: 2_000, backoffMs: 50, maxBackoffMs: 200 });
    try {
      ai.answer(() => ({ greeting: "Hello" }));
      // One hung call is waited out: the next attempt answers.
      ai.hangNext(1);
      const once = await runToEnd(executor, token, workflowId);
      expect(once.status).toBe("SUCCESS");
      expect(once.nodes.ai.output).toMatchObject({ greeting: "Hello" });

      // A provider that never answers: the node fails once the budget is spent, and the queue goes on.
      ai.hangNext(1_000_000);
      const first = await enqueue(token, workflowId);
      const second = await enqueue(token, workflowId);
      expect([first.status, second.status]).toEqual([202, 202]);
      let failed = (await getRun(token, first.body.runId)).body;
      for (let i = 0; i < 600 && failed.status !== "FAILED" && failed.status !== "SUCCESS"; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        failed = (await getRun(token, first.body.runId)).body;
      }
      ai.hangNext(0);
      await executor.idle();
      failed = (await getRun(token, first.body.runId)).body;
      expect(failed.status).toBe("FAILED");
      expect(failed.nodes.ai.status).toBe("FAILED");
      expect(failed.nodes.ai.error).toMatch(/^The AI provider kept failing for .* \(AI_BUDGET_MINUTES; last answer: The AI provider did not answer within 0.3 s/);

      let next = (await getRun(token, second.body.runId)).body;
      for (let i = 0; i < 600 && next.status !== "FAILED" && next.status !== "SUCCESS"; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        next = (await getRun(token, second.body.runId)).body;
      }
      expect(next.status).toBe("SUCCESS");
      expect(next.nodes.ai.output).toMatchObject({ greeting: "Hello" });
      expect(new Date(next.startedAt).getTime()).toBeGreaterThanOrEqual(new Date(failed.completedAt).getTime());
    } finally {
      ai.hangNext(0);
      Object.assign(aiItemPolicy, savedItem);
    }
  });
});
