import { once } from "node:events";
import { InngestTestEngine } from "@inngest/test";
import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DELETE as deleteRoute } from "@/app/api/webhooks/[webhookId]/route";
import { GET as deliveriesRoute } from "@/app/api/webhooks/[webhookId]/deliveries/route";
import { GET as listRoute, POST as createRoute } from "@/app/api/webhooks/route";
import { getDb } from "@/db/client";
import { runs, webhookDeliveries, webhooks, workflows } from "@/db/schema";
import { deliverWebhookFunction } from "@/inngest/functions/deliver-webhook";
import { resetConfig } from "@/lib/config";
import { newId } from "@/lib/ids";
import { attemptDelivery } from "@/lib/webhooks/deliver-webhook";
import {
  deliverDueWebhooks,
  startWebhookDeliveryLoop,
  stopWebhookDeliveryLoop,
  webhookDeliveryEvents,
  type DeliveryLoopOptions,
} from "@/lib/webhooks/delivery-loop";
import { enqueueRunWebhooks, type FinishedRun } from "@/lib/webhooks/enqueue-run-webhooks";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";
import { startWebhookReceiver, type WebhookReceiver } from "@/test/support/webhook-receiver";

type Account = Awaited<ReturnType<typeof createTestAccount>>;

const FAST: DeliveryLoopOptions = {
  retryDelaysMs: [0, 0, 0, 0],
  timeoutMs: 5000,
  maxResponseBytes: 64 * 1024,
  pollIntervalMs: 60_000,
  batchSize: 10,
};

let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
});

afterAll(async () => {
  await receiver.close();
});

beforeEach(async () => {
  // Deliveries a test left pending would otherwise be sent during the next test's passes.
  const db = await getDb();
  await db.update(webhookDeliveries).set({ status: "failed" }).where(eq(webhookDeliveries.status, "pending"));
  receiver.received.length = 0;
  receiver.script = [];
  receiver.redirectTo = null;
});

async function createWorkflow(accountId: string): Promise<string> {
  const db = await getDb();
  const id = newId("wf");
  await db.insert(workflows).values({ id, accountId, name: "Hooks", graph: { nodes: [], edges: [] } });
  return id;
}

async function finishedRun(account: Account, workflowId: string, status: FinishedRun["status"] = "SUCCESS"): Promise<FinishedRun> {
  const db = await getDb();
  const runId = newId("run");
  const result = { emailsSent: 2, filteredOut: 1, totalRows: 3 };
  const error = status === "FAILED" ? 'Node "out" failed: boom' : null;
  await db.insert(runs).values({ id: runId, workflowId, accountId: account.id, workflowVersion: 1, graph: {}, status, result, error });
  return { runId, workflowId, accountId: account.id, status, result, error };
}

async function registerWebhook(account: Account, body: Record<string, unknown> = {}) {
  const res = await call(createRoute, { token: account.token, json: { url: receiver.url, ...body } });
  expect(res.status).toBe(201);
  receiver.secret = res.body.secret;
  return res.body as { id: string; secret: string; url: string; events: string[]; workflowId: string | null };
}

async function deliveriesOf(webhookId: string) {
  const db = await getDb();
  return db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, webhookId));
}

/** Runs delivery passes until nothing is due (retry delays are zero in these tests). */
async function drain(options: DeliveryLoopOptions = FAST): Promise<void> {
  for (let pass = 0; pass < 10; pass++) {
    if ((await deliverDueWebhooks(options)) === 0) return;
  }
  throw new Error("deliveries still due after 10 passes");
}

describe("webhook endpoints", () => {
  it("creates a webhook with both events by default and a whsec_ secret shown once, stored encrypted", async () => {
    const account = await createTestAccount();
    const res = await call(createRoute, { token: account.token, json: { url: receiver.url } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^whk_/),
      url: receiver.url,
      events: ["run.succeeded", "run.failed"],
      workflowId: null,
      secret: expect.stringMatching(/^whsec_/),
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(Buffer.from(res.body.secret.slice(6), "base64")).toHaveLength(32);
    const db = await getDb();
    const [row] = await db.select().from(webhooks).where(eq(webhooks.id, res.body.id));
    expect(row.secretEncrypted).not.toContain(res.body.secret.slice(6));

    const list = await call(listRoute, { token: account.token, path: "/api/webhooks" });
    expect(list.status).toBe(200);
    expect(list.body.items).toEqual([{ id: res.body.id, url: receiver.url, events: res.body.events, workflowId: null, createdAt: res.body.createdAt }]);
    expect(list.body.nextCursor).toBeNull();
    expect(list.text).not.toContain("whsec_");
  });

  it("paginates the list newest first", async () => {
    const account = await createTestAccount();
    const first = await registerWebhook(account);
    const second = await registerWebhook(account);
    const page1 = await call(listRoute, { token: account.token, path: "/api/webhooks?limit=1" });
    expect(page1.body.items.map((w: { id: string }) => w.id)).toEqual([second.id]);
    const page2 = await call(listRoute, { token: account.token, path: `/api/webhooks?limit=1&cursor=${page1.body.nextCursor}` });
    expect(page2.body.items.map((w: { id: string }) => w.id)).toEqual([first.id]);
    expect(page2.body.nextCursor).toBeNull();
  });

  it.each([
    [{ url: "ftp://example.com/x" }, "url"],
    [{ url: "" }, "url"],
    [{ url: "https://example.com/x", events: ["run.started"] }, "events[0]"],
    [{ url: "https://example.com/x", events: [] }, "events"],
    [{ url: "https://example.com/x", secret: "mine" }, "secret"],
  ])("answers 422 for %j", async (body, path) => {
    const account = await createTestAccount();
    const res = await call(createRoute, { token: account.token, json: body });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("validation_failed");
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it("accepts only the account's own workflow (422 unknown_workflow otherwise)", async () => {
    const owner = await createTestAccount();
    const other = await createTestAccount();
    const workflowId = await createWorkflow(owner.id);
    const foreign = await call(createRoute, { token: other.token, json: { url: receiver.url, workflowId } });
    expect(foreign.status).toBe(422);
    expect(foreign.body.errors).toEqual([{ path: "workflowId", code: "unknown_workflow", message: `Workflow ${workflowId} does not exist` }]);
    const mine = await call(createRoute, { token: owner.token, json: { url: receiver.url, workflowId, events: ["run.failed"] } });
    expect(mine.status).toBe(201);
    expect(mine.body.workflowId).toBe(workflowId);
    expect(mine.body.events).toEqual(["run.failed"]);
  });

  it("refuses private and non-https targets when private targets are not allowed", async () => {
    process.env.ALLOW_PRIVATE_NETWORK_TARGETS = "false";
    resetConfig();
    try {
      const account = await createTestAccount();
      for (const url of [receiver.url, "https://169.254.169.254/latest", "https://[::ffff:127.0.0.1]/", "https://0x7f.1/"]) {
        const res = await call(createRoute, { token: account.token, json: { url } });
        expect(res.status).toBe(422);
        expect(res.body.code).toBe("validation_failed");
        expect(res.body.errors[0]).toMatchObject({ path: "url", code: "unsafe_url" });
      }
    } finally {
      delete process.env.ALLOW_PRIVATE_NETWORK_TARGETS;
      resetConfig();
    }
  });

  it("caps the number of webhooks per account", async () => {
    const account = await createTestAccount();
    const db = await getDb();
    await db.insert(webhooks).values(
      Array.from({ length: 25 }, () => ({ id: newId("whk"), accountId: account.id, url: receiver.url, events: ["run.failed"], secretEncrypted: "x" })),
    );
    const res = await call(createRoute, { token: account.token, json: { url: receiver.url } });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].code).toBe("too_many_webhooks");
  });

  it("deletes a webhook (404 afterwards, and for another account)", async () => {
    const owner = await createTestAccount();
    const other = await createTestAccount();
    const hook = await registerWebhook(owner);
    expect((await call(deleteRoute, { method: "DELETE", token: other.token, params: { webhookId: hook.id } })).status).toBe(404);
    expect((await call(deliveriesRoute, { token: other.token, params: { webhookId: hook.id } })).status).toBe(404);
    expect((await call(deleteRoute, { method: "DELETE", token: owner.token, params: { webhookId: hook.id } })).status).toBe(204);
    const again = await call(deleteRoute, { method: "DELETE", token: owner.token, params: { webhookId: hook.id } });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe("not_found");
    expect((await call(listRoute, { token: owner.token, path: "/api/webhooks" })).body.items).toEqual([]);
    expect((await call(deleteRoute, { method: "DELETE", token: owner.token, params: { webhookId: "whk_nope" } })).status).toBe(404);
  });
});

describe("delivery", () => {
  afterEach(async () => {
    await stopWebhookDeliveryLoop();
  });

  it("delivers a signed run.succeeded event that the standardwebhooks package verifies", async () => {
    const account = await createTestAccount();
    const workflowId = await createWorkflow(account.id);
    const hook = await registerWebhook(account);
    const run = await finishedRun(account, workflowId);
    const before = Math.floor(Date.now() / 1000);
    await enqueueRunWebhooks(run);
    await drain();
    const after = Math.ceil(Date.now() / 1000);

    expect(receiver.received).toHaveLength(1);
    const [request] = receiver.received;
    expect(request.verifyError).toBeNull();
    expect(request.payload).toEqual({
      type: "run.succeeded",
      timestamp: expect.stringMatching(/Z$/),
      data: { runId: run.runId, workflowId, status: "SUCCESS", result: run.result, error: null },
    });
    const [delivery] = await deliveriesOf(hook.id);
    expect(request.headers["webhook-id"]).toBe(delivery.id);
    expect(request.headers["content-type"]).toBe("application/json");
    // Signed when it was sent: between the enqueue and the end of the delivery.
    expect(Number(request.headers["webhook-timestamp"])).toBeGreaterThanOrEqual(before);
    expect(Number(request.headers["webhook-timestamp"])).toBeLessThanOrEqual(after);

    const res = await call(deliveriesRoute, { token: account.token, params: { webhookId: hook.id } });
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([
      expect.objectContaining({ id: delivery.id, event: "run.succeeded", runId: run.runId, status: "succeeded", attempts: 1, lastStatusCode: 200 }),
    ]);
    expect(res.body.nextCursor).toBeNull();
  });

  it("records one delivery per webhook, run and event however often the run is reported", async () => {
    const account = await createTestAccount();
    const workflowId = await createWorkflow(account.id);
    const hook = await registerWebhook(account);
    const run = await finishedRun(account, workflowId, "FAILED");
    await enqueueRunWebhooks(run);
    await enqueueRunWebhooks(run);
    await drain();
    await enqueueRunWebhooks(run);
    await drain();
    expect(await deliveriesOf(hook.id)).toHaveLength(1);
    expect(receiver.received).toHaveLength(1);
    expect((receiver.received[0].payload as { type: string; data: { error: string } }).data.error).toBe('Node "out" failed: boom');
  });

  it("sends only the subscribed events of the subscribed workflow", async () => {
    const account = await createTestAccount();
    const stranger = await createTestAccount();
    const workflowA = await createWorkflow(account.id);
    const workflowB = await createWorkflow(account.id);
    const onlyFailed = await registerWebhook(account, { events: ["run.failed"] });
    const onlyB = await registerWebhook(account, { workflowId: workflowB });
    receiver.secret = null;
    await enqueueRunWebhooks(await finishedRun(account, workflowA, "SUCCESS"));
    await enqueueRunWebhooks({ ...(await finishedRun(stranger, await createWorkflow(stranger.id), "FAILED")) });
    expect(await deliveriesOf(onlyFailed.id)).toHaveLength(0);
    expect(await deliveriesOf(onlyB.id)).toHaveLength(0);
    await enqueueRunWebhooks(await finishedRun(account, workflowB, "FAILED"));
    expect((await deliveriesOf(onlyFailed.id)).map((d) => d.event)).toEqual(["run.failed"]);
    expect((await deliveriesOf(onlyB.id)).map((d) => d.event)).toEqual(["run.failed"]);
  });

  it("retries a 500 with the same webhook-id, then succeeds", async () => {
    const account = await createTestAccount();
    const hook = await registerWebhook(account);
    receiver.script = [500, 503];
    await enqueueRunWebhooks(await finishedRun(account, await createWorkflow(account.id)));
    await drain();
    expect(receiver.received.map((r) => r.answeredStatus)).toEqual([500, 503, 200]);
    expect(new Set(receiver.received.map((r) => r.headers["webhook-id"])).size).toBe(1);
    expect(receiver.received.every((r) => r.verifyError === null)).toBe(true);
    const [delivery] = await deliveriesOf(hook.id);
    expect(delivery).toMatchObject({ status: "succeeded", attempts: 3, lastStatusCode: 200, lastError: null, nextAttemptAt: null });
  });

  it("waits for the backoff before the next attempt", async () => {
    const account = await createTestAccount();
    const hook = await registerWebhook(account);
    receiver.script = [500];
    await enqueueRunWebhooks(await finishedRun(account, await createWorkflow(account.id)));
    const slow = { ...FAST, retryDelaysMs: [60_000, 60_000, 60_000, 60_000] };
    expect(await deliverDueWebhooks(slow)).toBe(1);
    expect(await deliverDueWebhooks(slow)).toBe(0);
    const [delivery] = await deliveriesOf(hook.id);
    expect(delivery).toMatchObject({ status: "pending", attempts: 1, lastStatusCode: 500, lastError: "HTTP 500: failure 500" });
    // The next attempt is due one backoff (the first delay) after the failed one was recorded.
    expect(delivery.nextAttemptAt!.getTime() - delivery.updatedAt.getTime()).toBe(60_000);
  });

  it("gives up after 5 attempts", async () => {
    const account = await createTestAccount();
    const hook = await registerWebhook(account);
    receiver.script = [500, 500, 500, 500, 500, 500];
    await enqueueRunWebhooks(await finishedRun(account, await createWorkflow(account.id)));
    await drain();
    expect(receiver.received).toHaveLength(5);
    const [delivery] = await deliveriesOf(hook.id);
    expect(delivery).toMatchObject({ status: "failed", attempts: 5, lastStatusCode: 500, nextAttemptAt: null });
    expect(await attemptDelivery(delivery.id, FAST)).toEqual({ status: "failed", attempts: 5 });
    expect(receiver.received).toHaveLength(5);
  });

  it("does not follow redirects", async () => {
    const target = await startWebhookReceiver();
    try {
      const account = await createTestAccount();
      const hook = await registerWebhook(account);
      receiver.redirectTo = target.url;
      await enqueueRunWebhooks(await finishedRun(account, await createWorkflow(account.id)));
      expect(await deliverDueWebhooks(FAST)).toBe(1);
      expect(target.received).toHaveLength(0);
      const [delivery] = await deliveriesOf(hook.id);
      expect(delivery.lastStatusCode).toBe(307);
      expect(delivery.lastError).toBe(`HTTP 307: redirects are not followed (to ${target.url})`);
      expect(delivery.status).toBe("pending");
    } finally {
      await target.close();
    }
  });

  it("records a refused connection as the attempt's error", async () => {
    const account = await createTestAccount();
    const res = await call(createRoute, { token: account.token, json: { url: "http://127.0.0.1:1/hook" } });
    await enqueueRunWebhooks(await finishedRun(account, await createWorkflow(account.id)));
    await deliverDueWebhooks(FAST);
    const [delivery] = await deliveriesOf(res.body.id);
    expect(delivery).toMatchObject({ status: "pending", attempts: 1, lastStatusCode: null, lastError: "Connection refused" });
  });

  it("drops pending deliveries when the webhook is deleted", async () => {
    const account = await createTestAccount();
    const hook = await registerWebhook(account);
    await enqueueRunWebhooks(await finishedRun(account, await createWorkflow(account.id)));
    await call(deleteRoute, { method: "DELETE", token: account.token, params: { webhookId: hook.id } });
    await drain();
    expect(receiver.received).toHaveLength(0);
    expect((await deliveriesOf(hook.id))[0]).toMatchObject({ status: "failed", lastError: "Webhook deleted" });
  });

  it("the embedded loop delivers as soon as a run is reported", async () => {
    const account = await createTestAccount();
    const hook = await registerWebhook(account);
    startWebhookDeliveryLoop(FAST);
    const attempted = once(webhookDeliveryEvents, "attempt");
    const received = receiver.next();
    await enqueueRunWebhooks(await finishedRun(account, await createWorkflow(account.id)));
    const [request] = await Promise.all([received, attempted]);
    expect(request.verifyError).toBeNull();
    const [delivery] = await deliveriesOf(hook.id);
    expect(delivery.status).toBe("succeeded");
  });
});

describe("deliver-webhook Inngest function", () => {
  it("makes each attempt a step, sleeps between them and stops at success", async () => {
    const account = await createTestAccount();
    const hook = await registerWebhook(account);
    receiver.script = [500];
    const db = await getDb();
    const run = await finishedRun(account, await createWorkflow(account.id));
    // Recorded as under Inngest: the row exists, the event carries its id.
    const deliveryId = newId("dlv");
    await db.insert(webhookDeliveries).values({
      id: deliveryId,
      webhookId: hook.id,
      event: "run.succeeded",
      runId: run.runId,
      payload: { type: "run.succeeded", timestamp: new Date().toISOString(), data: { runId: run.runId } },
    });
    const engine = new InngestTestEngine({
      function: deliverWebhookFunction,
      events: [{ name: "flowmail/webhook.deliver", data: { deliveryId } }],
      // The test engine cannot wait out a sleep: mock the backoffs so they end at once.
      steps: [1, 2, 3, 4].map((n) => ({ id: `backoff-${n}`, handler: () => null })),
    });
    const { result, ctx } = await engine.execute();
    expect(result).toEqual({ deliveryId, status: "succeeded", attempts: 2 });
    expect(ctx.step.run).toHaveBeenCalledTimes(2);
    expect(ctx.step.sleep).toHaveBeenCalledWith("backoff-1", 5000);
    expect(receiver.received.map((r) => r.answeredStatus)).toEqual([500, 200]);
    expect((await deliveriesOf(hook.id))[0]).toMatchObject({ status: "succeeded", attempts: 2 });
  });

  it("re-sends the event of a delivery whose event was lost", async () => {
    const account = await createTestAccount();
    const hook = await registerWebhook(account);
    const run = await finishedRun(account, await createWorkflow(account.id));
    const db = await getDb();
    const stalledId = newId("dlv");
    const recentId = newId("dlv");
    const base = { webhookId: hook.id, runId: run.runId, payload: {} };
    await db.insert(webhookDeliveries).values([
      { ...base, id: stalledId, event: "run.succeeded", attempts: 2, nextAttemptAt: new Date(Date.now() - 20 * 60 * 1000) },
      { ...base, id: recentId, event: "run.failed", nextAttemptAt: new Date(Date.now() - 60 * 1000) },
    ]);
    const engine = new InngestTestEngine({
      function: deliverWebhookFunction,
      events: [{ name: "inngest/scheduled.timer", data: { cron: "*/5 * * * *" } }],
      // No Inngest server here: the send itself is mocked, its arguments are what we check.
      steps: [{ id: "redeliver", handler: () => ({ ids: ["evt"] }) }],
    });
    const { result, ctx } = await engine.execute();
    expect(result).toEqual({ redelivered: 1 });
    expect(ctx.step.sendEvent).toHaveBeenCalledWith("redeliver", [
      expect.objectContaining({ name: "flowmail/webhook.deliver", data: { deliveryId: stalledId }, id: `webhook-delivery-${stalledId}-2` }),
    ]);
  });
});
