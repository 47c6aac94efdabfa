// Tracing in one process (the embedded database and executor): an enqueue's traceparent becomes the parent of the
// run's spans, exported over OTLP/HTTP JSON to a local receiver; an AI call wrapped by observeAiCall is an `ai.call`
// span with its tokens, counted in the AI metrics.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderMetrics, resetMetrics } from "@/lib/observability/metrics";
import { observeAiCall } from "@/lib/observability/ai";
import { SpanKind, trace } from "@opentelemetry/api";
import { contextFromTraceparent, currentTraceparent, withRequestTraceparent } from "@/lib/observability/trace-context";
import { flushTracing, startTracing, stopTracing, withSpan } from "@/lib/observability/tracing";
import { createTestAccount } from "@/test/support/accounts";
import { startOtlpReceiver, type OtlpReceiver } from "@/test/support/otlp-receiver";
import { emailEveryRowWorkflow, enqueue, fakeResendForRuns, startTestExecutor } from "@/test/runs/helpers";

fakeResendForRuns();
let otlp: OtlpReceiver;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  expect(startTracing(otlp.url, "flowmail-test")).toBe(true);
  resetMetrics();
});

afterAll(async () => {
  await stopTracing();
  await otlp.close();
});

const traceId = "0af7651916cd43dd8448eb211c80319c";
const callerSpan = "b7ad6b7169203331";

describe("tracing in one process", () => {
  it("makes the enqueue request's traceparent the parent of the run, its nodes and its provider calls", async () => {
    const executor = startTestExecutor();
    const { id, token } = await createTestAccount();
    const { workflowId } = await emailEveryRowWorkflow(id, 2, "in-process-");
    const res = await enqueue(token, workflowId, { traceparent: `00-${traceId}-${callerSpan}-01` });
    expect(res.status).toBe(202);
    await executor.idle();
    await flushTracing();
    const spans = otlp.spans.filter((s) => s.traceId === traceId);
    const run = spans.find((s) => s.name === "run")!;
    expect(run.parentSpanId).toBe(callerSpan);
    expect(run.attributes).toMatchObject({ "flowmail.run.id": res.body.runId, "flowmail.run.status": "SUCCESS", "flowmail.run.trigger": "manual" });
    expect(spans.filter((s) => s.name === "node").every((n) => n.parentSpanId === run.spanId)).toBe(true);
    expect(spans.filter((s) => s.name === "node")).toHaveLength(3);
    const send = spans.find((s) => s.name === "send.batch")!;
    expect(send.attributes).toMatchObject({ "flowmail.send.transport": "resend", "flowmail.send.emails": 2, "http.response.status_code": 200 });
    expect(run.service).toBe("flowmail-test");
  });

  it("makes no span for a request: Next.js's tracer stays OpenTelemetry's no-op one, and a run enqueued in a handler keeps the caller's traceparent", async () => {
    const next = trace.getTracer("next.js", "0.0.1");
    const requestTrace = "1af7651916cd43dd8448eb211c80319c";
    const caller = `00-${requestTrace}-${callerSpan}-01`;
    const seen = await next.startActiveSpan("POST /api/x", { kind: SpanKind.SERVER }, contextFromTraceparent(caller), async (request) => {
      const inHandler = withRequestTraceparent(caller, () => currentTraceparent());
      request.end();
      return { recording: request.isRecording(), inHandler };
    });
    await flushTracing();
    expect(seen).toEqual({ recording: false, inHandler: caller });
    expect(otlp.spans.filter((s) => s.traceId === requestTrace)).toEqual([]);
  });

  it("records an AI call as an ai.call span with its model and tokens, and counts it", async () => {
    const answer = await withSpan("node", {}, () => observeAiCall({ provider: "openai", model: "gpt-test", costUsd: (t) => ((t.input ?? 0) + (t.output ?? 0)) / 1000 }, async () => ({ text: "hi", usage: { inputTokens: 120, outputTokens: 30 } })), contextFromTraceparent(`00-${traceId}-${callerSpan}-01`));
    expect(answer.text).toBe("hi");
    await expect(observeAiCall({ provider: "openai", model: "gpt-test" }, async () => Promise.reject(Object.assign(new Error("slow"), { name: "TimeoutError" })))).rejects.toThrow("slow");
    await flushTracing();
    const ai = otlp.spans.find((s) => s.name === "ai.call" && s.attributes["gen_ai.usage.input_tokens"] === 120)!;
    expect(ai.attributes).toMatchObject({ "gen_ai.system": "openai", "gen_ai.request.model": "gpt-test", "gen_ai.usage.output_tokens": 30 });
    expect(ai.traceId).toBe(traceId);
    const { body } = await renderMetrics();
    expect(body).toMatch(/^flowmail_ai_calls_total\{provider="openai",status="ok"\} 1$/m);
    expect(body).toMatch(/^flowmail_ai_calls_total\{provider="openai",status="timeout"\} 1$/m);
    expect(body).toMatch(/^flowmail_ai_tokens_total\{kind="input"\} 120$/m);
    expect(body).toMatch(/^flowmail_ai_tokens_total\{kind="output"\} 30$/m);
    expect(body).toMatch(/^flowmail_ai_cost_usd_total 0\.15$/m);
  });
});
