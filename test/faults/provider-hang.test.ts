/**
 * A provider call that hangs (the fake Resend answers nothing for 65 s):
 *  1. a cancel during the hang ends the run FAILED "Cancelled" within 5 s (the call in flight is abandoned), and when
 *     the hung call is finally processed and the run retried, every email has gone out exactly once;
 *  2. without a cancel, the call is abandoned after the per-call timeout and made again under its idempotency key:
 *     the run succeeds, each email once, and the hung call, processed later, delivers nothing more.
 * A refusal Resend describes only in its body (`{ name, message }`, no `statusCode`) fails the node at once.
 * Through the real route handlers, the Resend SDK and the embedded executor; PGlite and PostgreSQL (TEST_DATABASE_URL).
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as cancelHandler } from "@/app/api/workflows/runs/[runId]/cancel/route";
import { POST as retryHandler } from "@/app/api/workflows/runs/[runId]/retry/route";
import { resetConfig } from "@/lib/config";
import { resendCallPolicy } from "@/lib/email/resend-sender";
import { createTestAccount } from "@/test/support/accounts";
import { clearResendTransport, startFakeResend, type FakeResend, useResendTransport } from "@/test/support/fake-resend";
import { call } from "@/test/support/http";
import { emailEveryRowWorkflow, enqueue, getRun, startTestExecutor, stopTestExecutor } from "@/test/runs/helpers";
import { waitFor } from "./gate";

let resend: FakeResend;
const defaultTimeout = resendCallPolicy.timeoutMs;

beforeAll(async () => {
  process.env.EMAIL_DAILY_QUOTA = "1000000";
  process.env.EMAIL_RATE_PER_SECOND = "50";
  resetConfig();
  resend = await startFakeResend();
  useResendTransport(resend.url);
  startTestExecutor(2);
});

afterAll(async () => {
  resendCallPolicy.timeoutMs = defaultTimeout;
  await stopTestExecutor();
  await resend.close();
  clearResendTransport();
  delete process.env.EMAIL_RATE_PER_SECOND;
  resetConfig();
});

const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

async function finished(token: string, runId: string, timeoutMs = 60_000) {
  await waitFor(`run ${runId} to finish`, async () => ["SUCCESS", "FAILED"].includes((await getRun(token, runId)).body.status), timeoutMs);
  return (await getRun(token, runId)).body;
}

function expectEachOnce(addresses: string[]) {
  const delivered = resend.emails().map((e) => e.to[0]);
  expect(delivered.length).toBe(new Set(delivered).size);
  expect(new Set(delivered)).toEqual(new Set(addresses));
}

describe("a provider call that hangs", () => {
  it("is abandoned by a cancel: FAILED 'Cancelled' within 5 s; after a retry every email went out once", async () => {
    resend.reset();
    resendCallPolicy.timeoutMs = defaultTimeout;
    const { id, token } = await createTestAccount();
    const { workflowId, addresses } = await emailEveryRowWorkflow(id, 250, "hang-cancel-");
    resend.hangNext(1, 65_000);
    const runId = (await enqueue(token, workflowId)).body.runId as string;
    await waitFor("a call to hang", () => resend.hanging() === 1, 30_000);
    await waitFor("the other batches", () => resend.emails().length >= 150, 30_000);

    const askedAt = Date.now();
    const res = await call(cancelHandler, { method: "POST", path: `/api/workflows/runs/${runId}/cancel`, token, params: { runId } });
    expect(res.status).toBe(202);
    const stopped = await finished(token, runId);
    const stoppedMs = Date.now() - askedAt;
    expect(stopped).toMatchObject({ status: "FAILED", error: "Cancelled" });

    // The provider gets to the hung call after all (it delivers it: its client gone, the request was made).
    resend.releaseHung();
    await waitFor("the hung call to be processed", () => resend.emails().length === 250, 10_000);
    const retry = await call(retryHandler, { method: "POST", path: `/api/workflows/runs/${runId}/retry`, token, params: { runId } });
    expect(retry.status).toBe(202);
    expect((await finished(token, retry.body.runId)).status).toBe("SUCCESS");
    expectEachOnce(addresses);
    console.log(`cancel during a hung provider call (loadavg ${load()}): stopped ${stoppedMs} ms after the cancel`);
    expect(stoppedMs).toBeLessThanOrEqual(5_000);
  });

  it("is made again under its idempotency key after the per-call timeout: SUCCESS, each email once", async () => {
    resend.reset();
    resendCallPolicy.timeoutMs = 1_000;
    const { id, token } = await createTestAccount();
    const { workflowId, addresses } = await emailEveryRowWorkflow(id, 150, "hang-timeout-");
    resend.hangNext(1, 65_000);
    const runId = (await enqueue(token, workflowId)).body.runId as string;
    const run = await finished(token, runId);
    expect(run.status).toBe("SUCCESS");
    expectEachOnce(addresses);
    // The hung call is recorded when the fake gets to it: same key and body as the call made again, so it is answered
    // with that call's answer and delivers nothing.
    const before = resend.requests.length;
    resend.releaseHung();
    await waitFor("the hung call to be answered", () => resend.requests.length > before, 10_000);
    const hung = resend.requests[before];
    expect(resend.requests.filter((r) => r.headers["idempotency-key"] === hung.headers["idempotency-key"])).toHaveLength(2);
    expectEachOnce(addresses);
  });
});

describe("a refusal described only in Resend's body", () => {
  it("fails the node at once instead of being retried as a network failure", async () => {
    resend.reset();
    resendCallPolicy.timeoutMs = defaultTimeout;
    const { id, token } = await createTestAccount();
    const { workflowId } = await emailEveryRowWorkflow(id, 150, "bare-refusal-");
    resend.failNext(1, 422, undefined, { name: "invalid_from_address", bare: true });
    const runId = (await enqueue(token, workflowId)).body.runId as string;
    const run = await finished(token, runId);
    expect(run.status).toBe("FAILED");
    expect(run.nodes.out.error).toMatch(/^The email provider refused the emails: Resend invalid_from_address: Injected failure/);
    // The refused call was not made again.
    expect(resend.requests.filter((r) => r.status === 422)).toHaveLength(1);
  });
});
