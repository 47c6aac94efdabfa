/**
 * Inbound hooks (CONTRACT 13) through the real route handlers: create (URL with the token, once), list (no token),
 * delete (URL answers 404), deliveries start runs whose TRIGGER outputs { body }, duplicate deliveries (same webhook-id
 * or Idempotency-Key) answer the same run, and a body's list drives an OUTPUT's forEach — emails sent through the
 * real Resend SDK to a fake Resend.
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execRows, getDb } from "@/db/client";
import * as deliverRoute from "@/app/api/hooks/[token]/route";
import * as hooksRoute from "@/app/api/workflows/[workflowId]/hooks/route";
import * as hookRoute from "@/app/api/workflows/[workflowId]/hooks/[hookId]/route";
import * as workflowsRoute from "@/app/api/workflows/route";
import { resetConfig } from "@/lib/config";
import { createTestAccount } from "@/test/support/accounts";
import { clearResendTransport, startFakeResend, useResendTransport, type FakeResend } from "@/test/support/fake-resend";
import { call } from "@/test/support/http";
import { getRun, startTestExecutor, stopTestExecutor } from "@/test/runs/helpers";

type Account = Awaited<ReturnType<typeof createTestAccount>>;

let resend: FakeResend;
let alice: Account;

const peopleGraph = {
  nodes: [
    { id: "start", type: "TRIGGER", data: {} },
    { id: "mail", type: "OUTPUT", data: { forEach: "{{start.body.people}}", to: "{{item}}", subject: "Hello from {{start.body.team}}", body: "Hi {{item}}" } },
  ],
  edges: [{ source: "start", target: "mail" }],
};

beforeAll(async () => {
  resend = await startFakeResend();
  useResendTransport(resend.url);
  alice = await createTestAccount();
});

afterAll(async () => {
  await stopTestExecutor();
  clearResendTransport();
  await resend.close();
});

async function createWorkflow(token: string, graph: unknown = peopleGraph): Promise<string> {
  const res = await call(workflowsRoute.POST, { json: { name: "Hooked", graph }, token });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

async function createHook(token: string, workflowId: string) {
  const res = await call(hooksRoute.POST, { method: "POST", path: `/api/workflows/${workflowId}/hooks`, params: { workflowId }, token });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; url: string; createdAt: string };
}

function deliver(url: string, body: unknown, headers: Record<string, string> = {}) {
  return deliverRaw(url, JSON.stringify(body), headers);
}

function deliverRaw(url: string, raw: string, headers: Record<string, string> = {}) {
  const token = new URL(url).pathname.split("/").pop()!;
  return call(deliverRoute.POST, { method: "POST", path: `/api/hooks/${token}`, params: { token }, body: raw, headers: { "content-type": "application/json", ...headers } });
}

function listHooks(token: string, workflowId: string) {
  return call(hooksRoute.GET, { path: `/api/workflows/${workflowId}/hooks`, params: { workflowId }, token });
}

describe("inbound hooks", () => {
  it("creates a hook whose URL holds a 256-bit token shown once; the list never shows it", async () => {
    const workflowId = await createWorkflow(alice.token);
    const hook = await createHook(alice.token, workflowId);
    expect(hook.id).toMatch(/^hook_[A-Za-z0-9_-]{22}$/);
    expect(hook.url).toMatch(/^http:\/\/localhost:3000\/api\/hooks\/fmh_[A-Za-z0-9_-]{43}$/);
    const token = hook.url.split("/").pop()!;
    const list = await listHooks(alice.token, workflowId);
    expect(list.status).toBe(200);
    expect(list.body.items).toEqual([{ id: hook.id, workflowId, createdAt: hook.createdAt, lastDeliveries: [] }]);
    expect(list.text).not.toContain(token);
    const stored = await execRows<{ token_hash: string }>(await getDb(), sql`select token_hash from inbound_hooks where id = ${hook.id}`);
    expect(stored[0].token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored[0].token_hash).not.toContain(token);
  });

  it("delivered 3 times with the same webhook-id → one run; 3 people in the body → 3 emails", async () => {
    const executor = startTestExecutor(2);
    const workflowId = await createWorkflow(alice.token);
    const hook = await createHook(alice.token, workflowId);
    const people = ["ann@example.com", "bob@example.com", "cy@example.com"];
    const body = { team: "Flowmail", people };
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await deliver(hook.url, body, { "webhook-id": "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W" }));
    for (const res of answers) expect(res.status, res.text).toBe(202);
    const runIds = new Set(answers.map((a) => a.body.runId));
    expect(runIds.size).toBe(1);
    expect(Object.keys(answers[0].body)).toEqual(["runId"]);
    await executor.idle();

    const run = (await getRun(alice.token, answers[0].body.runId)).body;
    expect(run.status, JSON.stringify(run.error)).toBe("SUCCESS");
    expect(run.nodes.start.output).toEqual({ body });
    expect(run.nodes.mail.output.emailsSent).toBe(3);
    const runs = await execRows<{ n: number; trigger: string }>(await getDb(), sql`select count(*)::int as n, min(trigger) as trigger from runs where workflow_id = ${workflowId}`);
    expect(runs[0]).toEqual({ n: 1, trigger: "hook" });
    const sent = people.flatMap((p) => resend.emailsTo(p));
    expect(sent.map((e) => e.to[0]).sort()).toEqual(people);
    expect(sent.every((e) => e.subject === "Hello from Flowmail")).toBe(true);

    // Every delivery is listed, newest first, all answering the one run.
    const list = await listHooks(alice.token, workflowId);
    const deliveries = list.body.items[0].lastDeliveries;
    expect(deliveries).toHaveLength(3);
    expect(deliveries.every((d: { status: number; runId: string; idempotencyKey: string }) => d.status === 202 && d.runId === run.runId && d.idempotencyKey === "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W")).toBe(true);
  });

  it("Idempotency-Key works the same; different keys (or none) are different runs", async () => {
    const workflowId = await createWorkflow(alice.token);
    const hook = await createHook(alice.token, workflowId);
    const a = await deliver(hook.url, { people: [] }, { "idempotency-key": "order-1" });
    const b = await deliver(hook.url, { people: [] }, { "idempotency-key": "order-1" });
    const c = await deliver(hook.url, { people: [] }, { "idempotency-key": "order-2" });
    const d = await deliver(hook.url, { people: [] });
    expect([a.status, b.status, c.status, d.status]).toEqual([202, 202, 202, 202]);
    expect(b.body.runId).toBe(a.body.runId);
    expect(new Set([a.body.runId, c.body.runId, d.body.runId]).size).toBe(3);
  });

  it("accepts any JSON value; refuses non-JSON (400/415) and bodies over 1 MiB (413), recording each refusal", async () => {
    const workflowId = await createWorkflow(alice.token, {
      nodes: [
        { id: "start", type: "TRIGGER", data: {} },
        { id: "mail", type: "OUTPUT", data: { forEach: "{{start.body}}", to: "{{item}}", subject: "s", body: "b" } },
      ],
      edges: [{ source: "start", target: "mail" }],
    });
    const hook = await createHook(alice.token, workflowId);
    for (const value of [[], "text", 42, null]) expect((await deliver(hook.url, value)).status).toBe(202);
    const broken = await deliverRaw(hook.url, "{not json");
    expect(broken.status).toBe(400);
    expect(broken.headers.get("content-type")).toBe("application/problem+json");
    const form = await deliverRaw(hook.url, "a=1", { "content-type": "application/x-www-form-urlencoded" });
    expect(form.status).toBe(415);
    // Nesting PostgreSQL's jsonb parser could not take (its stack) is refused up front, never a 500.
    const deep = await deliverRaw(hook.url, "[".repeat(5000) + "]".repeat(5000));
    expect(deep.status).toBe(422);
    expect(deep.body.errors[0].code).toBe("too_deep");
    expect((await deliverRaw(hook.url, "[".repeat(100) + "]".repeat(100))).status).toBe(202);
    const huge = await deliver(hook.url, { pad: "x".repeat(1024 * 1024) });
    expect(huge.status).toBe(413);
    expect(huge.body.code).toBe("payload_too_large");
    const deliveries = (await listHooks(alice.token, workflowId)).body.items[0].lastDeliveries;
    expect(deliveries.map((d: { status: number }) => d.status)).toEqual([413, 202, 422, 415, 400, 202, 202, 202, 202]);
    expect(deliveries[0].code).toBe("payload_too_large");
  });

  it("answers 404 to an unknown, malformed or revoked token, and 404 to another account's hooks", async () => {
    const workflowId = await createWorkflow(alice.token);
    const hook = await createHook(alice.token, workflowId);
    const unknown = await deliver(`http://x/api/hooks/fmh_${"A".repeat(43)}`, {});
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("not_found");
    expect((await deliver("http://x/api/hooks/nope", {})).status).toBe(404);
    expect((await deliver(`http://x/api/hooks/${hook.id}`, {})).status).toBe(404);

    const bob = await createTestAccount();
    const params = { workflowId, hookId: hook.id };
    const stolen = await call(hookRoute.DELETE, { method: "DELETE", path: `/api/workflows/${workflowId}/hooks/${hook.id}`, params, token: bob.token });
    expect(stolen.status).toBe(404);
    expect((await listHooks(bob.token, workflowId)).status).toBe(404);
    expect((await deliver(hook.url, {})).status).toBe(202);

    const revoked = await call(hookRoute.DELETE, { method: "DELETE", path: `/api/workflows/${workflowId}/hooks/${hook.id}`, params, token: alice.token });
    expect(revoked.status).toBe(204);
    expect((await deliver(hook.url, {})).status).toBe(404);
    expect((await listHooks(alice.token, workflowId)).body.items).toEqual([]);
    const again = await call(hookRoute.DELETE, { method: "DELETE", path: `/api/workflows/${workflowId}/hooks/${hook.id}`, params, token: alice.token });
    expect(again.status).toBe(404);
  });

  it("is rate limited like enqueue (429 with Retry-After), per account", async () => {
    process.env.RUN_RATE_LIMIT_PER_MINUTE = "3";
    resetConfig();
    try {
      const carol = await createTestAccount();
      const workflowId = await createWorkflow(carol.token);
      const hook = await createHook(carol.token, workflowId);
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await deliver(hook.url, { people: [] })).status);
      expect(statuses).toEqual([202, 202, 202, 429]);
      const limited = await deliver(hook.url, { people: [] });
      expect(limited.body.code).toBe("rate_limited");
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    } finally {
      delete process.env.RUN_RATE_LIMIT_PER_MINUTE;
      resetConfig();
    }
  });

  it("a run whose delivery lacks a field the graph names fails at that node with a clear error", async () => {
    const executor = startTestExecutor(2);
    const workflowId = await createWorkflow(alice.token);
    const hook = await createHook(alice.token, workflowId);
    const res = await deliver(hook.url, { team: "Flowmail" });
    expect(res.status).toBe(202);
    await executor.idle();
    const run = (await getRun(alice.token, res.body.runId)).body;
    expect(run.status).toBe("FAILED");
    expect(run.nodes.start.status).toBe("SUCCESS");
    expect(run.nodes.mail.status).toBe("FAILED");
    expect(run.nodes.mail.error).toContain("{{start.body.people}}");
  });
});
