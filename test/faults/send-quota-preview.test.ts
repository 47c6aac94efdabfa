/**
 * Sending through the real Resend SDK against the fake Resend (CONTRACT 11, 12):
 * - the provider's daily quota runs out after 1,000 emails: the OUTPUT node fails at once with the contract's sentence;
 *   when the quota returns, a retry of the run sends the remaining emails and none twice;
 * - a preview of 10,000 rows renders every email in at most twice the time of a live run of the same rows (the fake
 *   unpaced here, so the comparison is rendering against rendering + sending), sends nothing, and its send delivers
 *   exactly the previewed set (same count, same subjects). Prints the figures.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as retryHandler } from "@/app/api/workflows/runs/[runId]/retry/route";
import { POST as sendHandler } from "@/app/api/workflows/runs/[runId]/send/route";
import { resetConfig } from "@/lib/config";
import type { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { createTestAccount } from "@/test/support/accounts";
import { clearResendTransport, startFakeResend, useResendTransport, type FakeResend } from "@/test/support/fake-resend";
import { call } from "@/test/support/http";
import { emailEveryRowWorkflow, getRun, insertUpload, insertWorkflow, runToEnd, startTestExecutor, stopTestExecutor } from "@/test/runs/helpers";
import { enqueueWith, listEmails, personGraph } from "@/test/sending/helpers";

let resend: FakeResend;
let executor: EmbeddedExecutor;

beforeAll(async () => {
  resend = await startFakeResend({ dailyQuota: 1000 });
  useResendTransport(resend.url);
  process.env.EMAIL_DAILY_QUOTA = "1000000";
  // The tests' fast pace: the quota runs out while several batches are in flight, and the node's sentence must still
  // count every email that went out (it is written again once they have all ended).
  resetConfig();
  executor = startTestExecutor(2);
});
afterAll(async () => {
  await stopTestExecutor();
  await resend.close();
  delete process.env.EMAIL_DAILY_QUOTA;
  clearResendTransport();
});

describe("the provider's daily quota", () => {
  it("fails the node with a sentence naming how many were sent after 1,000 emails; a retry after the quota returns sends the rest, none twice", async () => {
    const { id, token } = await createTestAccount();
    const { workflowId, addresses } = await emailEveryRowWorkflow(id, 2500, "quota-");
    const failed = await runToEnd(executor, token, workflowId);
    expect(failed.status).toBe("FAILED");
    expect(failed.nodes.out.error).toBe(
      "Resend's daily quota is used up: 1,000 of 2,500 emails were sent. Retry the run after the quota resets; emails already sent will not be sent again.",
    );
    expect(failed.result.emailsSent).toBe(1000);
    expect(resend.emails()).toHaveLength(1000);
    const counts = (await listEmails(token, failed.runId, "out")).body.counts;
    expect(counts).toMatchObject({ sent: 1000, failed: 1500, pending: 0 });

    resend.setDailyQuota(undefined);
    const retry = await call(retryHandler, { method: "POST", path: `/api/workflows/runs/${failed.runId}/retry`, token, params: { runId: failed.runId } });
    expect(retry.status).toBe(202);
    await executor.idle();
    const retried = (await getRun(token, retry.body.runId)).body;
    expect(retried.status).toBe("SUCCESS");
    const emails = resend.emails();
    expect(emails).toHaveLength(2500);
    expect(new Set(emails.map((e) => e.to[0]))).toEqual(new Set(addresses));
    console.log(`send-quota: first run FAILED after ${failed.result.emailsSent} emails; retry ${retried.status} with ${retried.result.emailsSent} sent by the chain; delivered=${emails.length} distinct=${new Set(emails.map((e) => e.to[0])).size}`);
  });
});

describe("a preview of 10,000 rows", () => {
  it("renders every email in ≤ 2× a live run's time, sends nothing, and its send delivers exactly the previewed set", async () => {
    process.env.EMAIL_RATE_PER_SECOND = "1000"; // the fake is unpaced here: rendering is what is compared
    resetConfig();
    resend.reset();
    resend.setDailyQuota(undefined);
    const { id, token } = await createTestAccount();
    const rows = Array.from({ length: 10_000 }, (_, i) => [`p${i}@example.com`, `Person ${i}`]);
    const uploadId = await insertUpload(id, ["email", "name"], rows);
    const workflowId = await insertWorkflow(id, personGraph(uploadId, { body: "Dear {{item.name}}, unsubscribe: {{unsubscribeUrl}}" }));

    let t = performance.now();
    const live = await runToEnd(executor, token, workflowId);
    const liveSeconds = (performance.now() - t) / 1000;
    expect(live.result.emailsSent).toBe(10_000);
    resend.reset();

    t = performance.now();
    const enqueued = await enqueueWith(token, workflowId, { mode: "preview" });
    await executor.idle();
    const previewSeconds = (performance.now() - t) / 1000;
    const preview = (await getRun(token, enqueued.body.runId)).body;
    expect(preview.status).toBe("SUCCESS");
    expect(preview.result).toMatchObject({ emailsSent: 0, emailsPlanned: 10_000 });
    expect(resend.requests).toHaveLength(0);
    const previewed = (await listEmails(token, preview.runId, "out", "?status=preview&limit=1000&offset=9000")).body;
    expect(previewed.total).toBe(10_000);
    expect(previewed.items[999]).toMatchObject({ index: 9999, to: "p9999@example.com", subject: "Hi Person 9999" });
    expect(previewed.items[999].body).toMatch(/^Dear Person 9999, unsubscribe: http:\/\/localhost:3000\/api\/unsubscribe\//);

    t = performance.now();
    const sent = await call(sendHandler, { method: "POST", path: `/api/workflows/runs/${preview.runId}/send`, token, params: { runId: preview.runId } });
    expect(sent.status).toBe(202);
    expect(sent.body.sendOf).toBe(preview.runId);
    await executor.idle();
    const sendSeconds = (performance.now() - t) / 1000;
    const sendRun = (await getRun(token, sent.body.runId)).body;
    expect(sendRun).toMatchObject({ status: "SUCCESS", result: { emailsSent: 10_000 } });
    const delivered = resend.emails();
    expect(delivered).toHaveLength(10_000);
    const previewSubjects: string[] = [];
    for (let offset = 0; offset < 10_000; offset += 1000) {
      const page = (await listEmails(token, preview.runId, "out", `?limit=1000&offset=${offset}`)).body;
      previewSubjects.push(...page.items.map((e: { to: string; subject: string }) => `${e.to} ${e.subject}`));
    }
    expect(delivered.map((e) => `${e.to[0]} ${e.subject}`).sort()).toEqual(previewSubjects.sort());
    const again = await call(sendHandler, { method: "POST", path: `/api/workflows/runs/${preview.runId}/send`, token, params: { runId: preview.runId } });
    expect(again.status).toBe(409);
    const notPreview = await call(sendHandler, { method: "POST", path: `/api/workflows/runs/${live.runId}/send`, token, params: { runId: live.runId } });
    expect(notPreview.status).toBe(409);

    console.log(`send-preview: rows=10000 live=${liveSeconds.toFixed(2)}s preview=${previewSeconds.toFixed(2)}s (${(previewSeconds / liveSeconds).toFixed(2)}× live) send-of-preview=${sendSeconds.toFixed(2)}s delivered=${delivered.length}`);
    expect(previewSeconds).toBeLessThanOrEqual(2 * liveSeconds);
  });
});
