// Issue 20, point 11: the embedded delivery loop must not make one account's deliveries wait behind another's hanging
// receiver: each delivery holds its own slot, and one account holds at most three slots at once.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as createWebhook } from "@/app/api/webhooks/route";
import { getDb } from "@/db/client";
import { runs, webhookDeliveries, workflows } from "@/db/schema";
import { newId } from "@/lib/ids";
import { pokeWebhookDeliveryLoop, startWebhookDeliveryLoop, stopWebhookDeliveryLoop, webhookDeliveryEvents } from "@/lib/webhooks/delivery-loop";
import { enqueueRunWebhooks } from "@/lib/webhooks/enqueue-run-webhooks";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";

const RESULT = { emailsSent: 0, filteredOut: 0, totalRows: 0 };

type Account = Awaited<ReturnType<typeof createTestAccount>>;

let hanging: http.Server;
let fast: http.Server;
let hangingHits = 0;
const hangingArrived: (() => void)[] = [];

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

beforeAll(() => {
  hanging = http.createServer(() => {
    hangingHits++; // never answers: the sender's 30 s timeout would be the only way out
    hangingArrived.splice(0).forEach((resolve) => resolve());
  });
  fast = http.createServer((_req, res) => res.writeHead(204).end());
});

afterAll(async () => {
  hanging.closeAllConnections();
  await new Promise((resolve) => hanging.close(resolve));
  await new Promise((resolve) => fast.close(resolve));
});

async function finishedRun(account: Account): Promise<string> {
  const db = await getDb();
  const workflowId = newId("wf");
  await db.insert(workflows).values({ id: workflowId, accountId: account.id, name: "W", graph: { nodes: [], edges: [] } });
  const runId = newId("run");
  await db.insert(runs).values({ id: runId, workflowId, accountId: account.id, workflowVersion: 1, graph: {}, status: "SUCCESS", result: RESULT });
  await enqueueRunWebhooks({ runId, workflowId, accountId: account.id, status: "SUCCESS", result: RESULT, error: null });
  const [delivery] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.runId, runId));
  return delivery.id;
}

const untilHangingHits = (n: number) =>
  new Promise<void>((resolve) => {
    const check = () => (hangingHits >= n ? resolve() : hangingArrived.push(check));
    check();
  });

const attempted = (deliveryId: string) =>
  new Promise<void>((resolve) => {
    const listener = (id: string) => {
      if (id !== deliveryId) return;
      webhookDeliveryEvents.off("attempt", listener);
      resolve();
    };
    webhookDeliveryEvents.on("attempt", listener);
  });

describe("embedded webhook delivery", () => {
  it("delivers another account's webhook while one account's receivers hang", async () => {
    const [hangingUrl, fastUrl] = [await listen(hanging), await listen(fast)];
    const slow = await createTestAccount();
    const other = await createTestAccount();
    expect((await call(createWebhook, { token: slow.token, json: { url: hangingUrl } })).status).toBe(201);
    expect((await call(createWebhook, { token: other.token, json: { url: fastUrl } })).status).toBe(201);

    startWebhookDeliveryLoop({ retryDelaysMs: [0, 0, 0, 0], timeoutMs: 30_000, pollIntervalMs: 60_000, batchSize: 4 });
    try {
      // Five deliveries to the hanging receiver: it holds at most three of the four slots.
      const stuck = [];
      for (let i = 0; i < 5; i++) stuck.push(await finishedRun(slow));
      pokeWebhookDeliveryLoop();
      await untilHangingHits(3);

      const otherDelivery = await finishedRun(other);
      const done = attempted(otherDelivery);
      pokeWebhookDeliveryLoop();
      await done;

      const db = await getDb();
      const [delivered] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, otherDelivery));
      expect(delivered).toMatchObject({ status: "succeeded", lastStatusCode: 204 });
      // Recorded while the hanging attempts are all still open: nothing waited for them.
      const [first] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, stuck[0]));
      const hung = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, first.webhookId));
      expect(hung).toHaveLength(5);
      expect(hung.every((d) => d.status === "pending" && d.attempts === 0)).toBe(true);
      expect(hangingHits).toBe(3);
    } finally {
      hanging.closeAllConnections(); // the hanging attempts end (connection reset) so the loop can stop
      await stopWebhookDeliveryLoop();
    }
  });
});
