// End to end through the run engine: a workflow reading a Google Sheet from the (fake) Drive, and a webhook
// receiving the run's outcome from the embedded delivery loop.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as createWebhookRoute } from "@/app/api/webhooks/route";
import { startWebhookDeliveryLoop, stopWebhookDeliveryLoop } from "@/lib/webhooks/delivery-loop";
import { createTestAccount } from "@/test/support/accounts";
import { linkGoogleAccount, startFakeGoogle, type FakeGoogle } from "@/test/support/fake-google";
import { call } from "@/test/support/http";
import { startWebhookReceiver, type WebhookReceiver } from "@/test/support/webhook-receiver";
import { insertWorkflow, runToEnd, startTestExecutor, stopTestExecutor, trigger } from "@/test/runs/helpers";
import type { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";

let google: FakeGoogle;
let receiver: WebhookReceiver;
let executor: EmbeddedExecutor;

beforeAll(async () => {
  google = await startFakeGoogle();
  google.configureApp();
  receiver = await startWebhookReceiver();
  executor = startTestExecutor();
  startWebhookDeliveryLoop({ retryDelaysMs: [0, 0, 0, 0], pollIntervalMs: 60_000 });
});

afterAll(async () => {
  await stopWebhookDeliveryLoop();
  await stopTestExecutor();
  await receiver.close();
  await google.close();
});

const graph = {
  nodes: [
    trigger,
    { id: "src", type: "DATA_SOURCE", data: { driveFileId: "sheet1" } },
    { id: "out", type: "OUTPUT", data: { forEach: "{{src.rows}}", to: "{{item.email}}", subject: "Hello {{item.name}}", body: "Score {{item.score}}" } },
  ],
  edges: [
    { source: "t", target: "src" },
    { source: "src", target: "out" },
  ],
};

describe("a Drive data source in a run, reported by webhook", () => {
  it("runs from the exported Sheet, then fails with the reconnect sentence once Google revokes the link", async () => {
    google.files = [
      {
        id: "sheet1",
        name: "Leads",
        mimeType: "application/vnd.google-apps.spreadsheet",
        content: "name,email,score\nAda,ada@example.com,5\nBob,bob@example.com,3\n",
      },
    ];
    const account = await createTestAccount();
    await linkGoogleAccount(account.token);
    const hook = await call(createWebhookRoute, { token: account.token, json: { url: receiver.url } });
    expect(hook.status).toBe(201);
    receiver.secret = hook.body.secret;
    const workflowId = await insertWorkflow(account.id, graph);

    const delivered = receiver.next();
    const run = await runToEnd(executor, account.token, workflowId);
    expect(run.status).toBe("SUCCESS");
    expect(run.result).toEqual({ emailsSent: 2, filteredOut: 0, totalRows: 2, suppressed: 0, duplicates: 0 });
    const success = await delivered;
    expect(success.verifyError).toBeNull();
    expect(success.payload).toMatchObject({
      type: "run.succeeded",
      data: { runId: run.runId, workflowId, status: "SUCCESS", result: { emailsSent: 2, totalRows: 2 }, error: null },
    });

    google.revokeAllRefreshTokens();
    const failedDelivery = receiver.next();
    const failed = await runToEnd(executor, account.token, workflowId);
    expect(failed.status).toBe("FAILED");
    expect(failed.nodes.src).toMatchObject({ status: "FAILED", error: "Google account link expired: reconnect it" });
    expect(failed.nodes.out.status).toBe("SKIPPED");
    const failure = await failedDelivery;
    expect(failure.verifyError).toBeNull();
    expect(failure.payload).toMatchObject({ type: "run.failed", data: { runId: failed.runId, status: "FAILED" } });
    expect((failure.payload as { data: { error: string } }).data.error).toContain("Google account link expired: reconnect it");
  });
});
