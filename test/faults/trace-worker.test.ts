/**
 * Traces across processes: an inbound hook delivery carries a `traceparent`; the run it enqueues is executed by a
 * worker process (`worker/index.ts`, as `npm run worker` starts it) exporting to a local OTLP/HTTP receiver. The run's
 * `run`, `node` and `send.batch` spans arrive in the caller's trace, the `run` span a child of the caller's span, and
 * the run's outbound webhook carries a `traceparent` of the same trace. The worker's log lines are JSON and name the run.
 */
import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as deliverRoute from "@/app/api/hooks/[token]/route";
import * as hooksRoute from "@/app/api/workflows/[workflowId]/hooks/route";
import * as webhooksRoute from "@/app/api/webhooks/route";
import { execRows, getDb } from "@/db/client";
import { createTestAccount } from "@/test/support/accounts";
import { startFakeResend, type FakeResend } from "@/test/support/fake-resend";
import { call } from "@/test/support/http";
import { startOtlpReceiver, type OtlpReceiver } from "@/test/support/otlp-receiver";
import { startWebhookReceiver, type WebhookReceiver } from "@/test/support/webhook-receiver";
import { emailEveryRowWorkflow } from "@/test/runs/helpers";
import { loadAverage } from "./server-fixture";
import { waitFor } from "./gate";
import { startWorkerProcess, type WorkerProcess } from "./worker-process";

let otlp: OtlpReceiver;
let resend: FakeResend;
let receiver: WebhookReceiver;
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  resend = await startFakeResend();
  receiver = await startWebhookReceiver();
});

afterAll(async () => {
  if (worker && worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill("SIGKILL");
  await otlp.close();
  await resend.close();
  await receiver.close();
});

describe("a run's spans in its caller's trace, executed by a worker process", () => {
  it("keeps the hook's traceparent with the run; run, node and send.batch spans are its children at the OTLP receiver", async () => {
    // TEST_DATABASE_CURRENT_URL: the worker process reaches this file's PostgreSQL database by its address.
    expect(process.env.TEST_DATABASE_CURRENT_URL).toMatch(/^postgres/);
    const { id, token } = await createTestAccount();
    const { workflowId } = await emailEveryRowWorkflow(id, 3, "traced-");
    const hook = await call(hooksRoute.POST, { method: "POST", path: `/api/workflows/${workflowId}/hooks`, params: { workflowId }, token });
    expect(hook.status, hook.text).toBe(201);
    const webhook = await call(webhooksRoute.POST, { json: { url: `${receiver.url}/hooks/flowmail` }, token });
    expect(webhook.status, webhook.text).toBe(201);
    receiver.secret = webhook.body.secret;

    const traceId = randomBytes(16).toString("hex");
    const callerSpanId = randomBytes(8).toString("hex");
    const hookToken = new URL(hook.body.url).pathname.split("/").pop()!;
    const delivered = await call(deliverRoute.POST, {
      method: "POST",
      path: `/api/hooks/${hookToken}`,
      params: { token: hookToken },
      body: JSON.stringify({ hello: "world" }),
      headers: { "content-type": "application/json", traceparent: `00-${traceId}-${callerSpanId}-01` },
    });
    expect(delivered.status, delivered.text).toBe(202);
    const runId = delivered.body.runId as string;
    const [stored] = await execRows<{ traceparent: string | null; status: string }>(await getDb(), sql`select traceparent, status from runs where id = ${runId}`);
    expect(stored).toEqual({ traceparent: `00-${traceId}-${callerSpanId}-01`, status: "PENDING" });

    worker = startWorkerProcess({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, RESEND_API_KEY: "re_test", RESEND_BASE_URL: resend.url, EMAIL_RATE_PER_SECOND: "1000" });
    await worker.started;
    await waitFor("the run to finish", async () => {
      const [row] = await execRows<{ status: string }>(await getDb(), sql`select status from runs where id = ${runId}`);
      return row.status === "SUCCESS";
    }, 120_000);
    await waitFor("the run's webhook", () => receiver.received.length > 0, 60_000);
    // Recorded as delivered: its attempt (and the span around it) has ended before the worker is stopped.
    await waitFor("the webhook delivery to be recorded", async () => {
      const [row] = await execRows<{ status: string }>(await getDb(), sql`select status from webhook_deliveries where run_id = ${runId}`);
      return row?.status === "succeeded";
    }, 60_000);
    // The worker exports every second while it runs.
    await waitFor("the run's spans at the receiver", () =>
      ["run", "webhook.deliver"].every((name) => otlp.spans.some((s) => s.traceId === traceId && s.name === name)), 30_000);
    // SIGTERM: the worker hands back, flushes its spans and exits.
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toBe(143);

    const inTrace = otlp.spans.filter((s) => s.traceId === traceId);
    const run = inTrace.find((s) => s.name === "run")!;
    expect(run).toBeDefined();
    expect(run.parentSpanId).toBe(callerSpanId);
    expect(run.service).toBe("flowmail-worker");
    expect(run.attributes).toMatchObject({
      "flowmail.run.id": runId,
      "flowmail.workflow.id": workflowId,
      "flowmail.run.trigger": "hook",
      "flowmail.run.mode": "live",
      "flowmail.run.status": "SUCCESS",
    });
    const nodes = inTrace.filter((s) => s.name === "node");
    expect(nodes.map((n) => n.attributes["flowmail.node.type"]).sort()).toEqual(["DATA_SOURCE", "OUTPUT", "TRIGGER"]);
    for (const node of nodes) {
      expect(node.parentSpanId).toBe(run.spanId);
      expect(node.attributes["flowmail.node.status"]).toBe("SUCCESS");
    }
    const source = nodes.find((n) => n.attributes["flowmail.node.type"] === "DATA_SOURCE")!;
    expect(source.attributes["flowmail.node.items_out"]).toBe(3);
    const output = nodes.find((n) => n.attributes["flowmail.node.type"] === "OUTPUT")!;
    const sends = inTrace.filter((s) => s.name === "send.batch");
    expect(sends.length).toBeGreaterThanOrEqual(1);
    expect(sends.reduce((n, s) => n + Number(s.attributes["flowmail.send.emails"]), 0)).toBe(3);
    for (const send of sends) {
      expect(send.attributes).toMatchObject({ "flowmail.send.transport": "resend", "http.response.status_code": 200 });
      expect(send.parentSpanId).toBe(output.spanId);
    }
    // The outbound webhook: its own span in the run's trace, and the receiver got that span as its parent.
    const deliveredWebhook = receiver.received[0];
    expect(deliveredWebhook.verifyError).toBeNull();
    const outbound = String(deliveredWebhook.headers.traceparent ?? "");
    expect(outbound).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    const webhookSpan = inTrace.find((s) => s.name === "webhook.deliver")!;
    expect(outbound.split("-")[2]).toBe(webhookSpan.spanId);
    expect(webhookSpan.parentSpanId).toBe(callerSpanId);
    // The worker's log lines are JSON objects with level, time and msg; the run's lines name it.
    expect(worker.lines.every((l) => typeof l.level === "string" && typeof l.time === "string" && typeof l.msg === "string")).toBe(true);
    console.log(`trace-worker: spans in trace=${inTrace.length} (run 1, node ${nodes.length}, send.batch ${sends.length}) exports=${otlp.requests} loadavg ${loadAverage()}`);
  });
});
