// Issue 20, points 8 and 9: webhook URLs and openai-compatible base URLs use ports 443/80 only unless
// ALLOW_PRIVATE_NETWORK_TARGETS is on; the text of another service's error (AI provider, webhook receiver) reaches
// people bounded and cleaned: no file paths, SQL or markup copied from it.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PUT as putAiProvider } from "@/app/api/account/ai-provider/route";
import { POST as createWebhook } from "@/app/api/webhooks/route";
import { getDb } from "@/db/client";
import { runs, webhookDeliveries, workflows } from "@/db/schema";
import { AiCallError, generateStructured } from "@/lib/ai/generate";
import { resetConfig } from "@/lib/config";
import { newId } from "@/lib/ids";
import { attemptDelivery } from "@/lib/webhooks/deliver-webhook";
import { enqueueRunWebhooks } from "@/lib/webhooks/enqueue-run-webhooks";
import { createTestAccount } from "@/test/support/accounts";
import { startFakeOpenAI, type FakeOpenAI } from "@/test/support/fake-openai";
import { call } from "@/test/support/http";

const RESULT = { emailsSent: 0, filteredOut: 0, totalRows: 0 };
const LEAKY = `<html><body><h1>500</h1><pre>error: relation "users" does not exist
    at Parser.parseErrorMessage (/srv/app/node_modules/pg-protocol/dist/parser.js:287:98)
SELECT id, password_hash FROM users WHERE email = 'a@b.c'</pre></body></html>`;

afterEach(() => {
  delete process.env.ALLOW_PRIVATE_NETWORK_TARGETS;
  resetConfig();
});

function expectClean(text: string) {
  expect(text).not.toMatch(/\/srv\/app|node_modules|password_hash|SELECT|<html|<pre>|parser\.js/);
  expect(text.length).toBeLessThan(400);
}

describe("ports of outbound targets", () => {
  const publicIp = "93.184.215.14"; // a literal public address: no DNS, nothing is contacted on creation

  it("refuses a webhook on port 6379 and an openai-compatible base URL on port 5432 in production mode", async () => {
    process.env.ALLOW_PRIVATE_NETWORK_TARGETS = "false";
    resetConfig();
    const account = await createTestAccount();
    const redis = await call(createWebhook, { token: account.token, json: { url: `https://${publicIp}:6379/hook` } });
    expect(redis.status).toBe(422);
    expect(redis.body.errors[0]).toMatchObject({ path: "url", code: "unsafe_url", message: expect.stringMatching(/port 6379.*443 and 80/) });
    const ai = await call(putAiProvider, {
      method: "PUT", token: account.token,
      json: { provider: "openai-compatible", apiKey: "sk-test-1234", model: "m", baseUrl: `https://${publicIp}:5432/v1` },
    });
    expect(ai.status).toBe(422);
    expect(JSON.stringify(ai.body.errors)).toMatch(/port 5432/);
    for (const url of [`https://${publicIp}/hook`, `https://${publicIp}:443/hook`, `https://${publicIp}:80/hook`]) {
      expect((await call(createWebhook, { token: account.token, json: { url } })).status, url).toBe(201);
    }
  });

  it("allows any port with ALLOW_PRIVATE_NETWORK_TARGETS=true (local development)", async () => {
    process.env.ALLOW_PRIVATE_NETWORK_TARGETS = "true";
    resetConfig();
    const account = await createTestAccount();
    expect((await call(createWebhook, { token: account.token, json: { url: "http://127.0.0.1:6379/hook" } })).status).toBe(201);
  });
});

describe("provider error text", () => {
  let ai: FakeOpenAI;
  let receiver: http.Server;
  let receiverUrl: string;

  beforeAll(async () => {
    ai = await startFakeOpenAI();
    receiver = http.createServer((_req, res) => res.writeHead(500, { "content-type": "text/html" }).end(LEAKY));
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => {
    await ai.close();
    await new Promise((resolve) => receiver.close(resolve));
  });

  it("keeps the AI provider's status and a cleaned message, not its paths and SQL", async () => {
    ai.failNext(1, 400, LEAKY);
    const error = await generateStructured({
      settings: { provider: "openai-compatible", apiKey: "sk-test", model: "fake-model", baseUrl: ai.url },
      modelId: "fake-model",
      prompt: "hi",
      outputs: [{ name: "answer", type: "string" }] as never,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AiCallError);
    const message = (error as Error).message;
    expect(message).toMatch(/^The AI provider answered with an error \(HTTP 400, server_error\)/);
    expect(message).toMatch(/relation "users" does not exist/);
    expectClean(message);
  });

  it("records a webhook receiver's error page as its status and a cleaned snippet", async () => {
    const account = await createTestAccount();
    const hook = await call(createWebhook, { token: account.token, json: { url: receiverUrl } });
    expect(hook.status).toBe(201);
    const db = await getDb();
    const workflowId = newId("wf");
    await db.insert(workflows).values({ id: workflowId, accountId: account.id, name: "Leaky", graph: { nodes: [], edges: [] } });
    const runId = newId("run");
    await db.insert(runs).values({ id: runId, workflowId, accountId: account.id, workflowVersion: 1, graph: {}, status: "SUCCESS", result: RESULT });
    await enqueueRunWebhooks({ runId, workflowId, accountId: account.id, status: "SUCCESS", result: RESULT, error: null });
    const [delivery] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.runId, runId));
    await attemptDelivery(delivery.id, { retryDelaysMs: [0, 0, 0, 0], timeoutMs: 5000, maxResponseBytes: 64 * 1024 });
    const [after] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, delivery.id));
    expect(after.lastStatusCode).toBe(500);
    expect(after.lastError).toMatch(/^HTTP 500: /);
    expectClean(after.lastError!);
  });
});
