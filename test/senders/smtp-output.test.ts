// OUTPUT through an account's SMTP sender (real nodemailer, pooled, against a local smtp-server): the node's senderId,
// else the account's default, else the deployment's transport; Message-ID from the idempotency key; Reply-To rendered
// per item; throttling (421) waited out without dropping an email; a refused recipient marked failed while the rest go;
// a refused sender failing the node at once.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { resetConfig } from "@/lib/config";
import { renderMetrics } from "@/lib/observability/metrics";
import type { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { createTestAccount } from "@/test/support/accounts";
import { startFakeSmtp, type FakeSmtp } from "@/test/support/fake-smtp";
import { clearResendTransport, startFakeResend, useResendTransport, type FakeResend } from "@/test/support/fake-resend";
import { insertUpload, insertWorkflow, startTestExecutor, stopTestExecutor } from "@/test/runs/helpers";
import { listEmails, personGraph } from "@/test/sending/helpers";
import { POST as retryHandler } from "@/app/api/workflows/runs/[runId]/retry/route";
import { call } from "@/test/support/http";
import { finished, runToFinish, senderApi, smtpSender } from "./helpers";

let smtp: FakeSmtp;
let resend: FakeResend;
let executor: EmbeddedExecutor;

beforeAll(async () => {
  smtp = await startFakeSmtp();
  resend = await startFakeResend();
  useResendTransport(resend.url);
  executor = startTestExecutor(2);
});
afterAll(async () => {
  await stopTestExecutor();
  await smtp.close();
  await resend.close();
  clearResendTransport();
});
beforeEach(() => {
  smtp.reset();
  resend.reset();
});

const people = (n: number) => Array.from({ length: n }, (_, i) => [`p${i}@example.com`, `P${i}`]);

async function setup(out: Record<string, unknown>, rows = people(3), sender: Record<string, unknown> = {}) {
  const account = await createTestAccount();
  const made = await senderApi(account.token).create(smtpSender(smtp.port, { ratePerSecond: 200, ...sender }));
  const uploadId = await insertUpload(account.id, ["email", "name"], rows);
  const graph = personGraph(uploadId, typeof out.senderId === "string" && out.senderId === "$sender" ? { ...out, senderId: made.body.id } : out);
  const workflowId = await insertWorkflow(account.id, graph);
  return { ...account, workflowId, senderId: made.body.id as string };
}

describe("OUTPUT through an SMTP sender", () => {
  it("sends each email once through the node's sender, with a stable Message-ID and the rendered Reply-To", async () => {
    const { token, workflowId } = await setup({ senderId: "$sender", replyTo: "{{item.name}}@replies.example.com" });
    const run = await runToFinish(executor, token, workflowId);
    expect(run.status).toBe("SUCCESS");
    expect(run.result).toMatchObject({ emailsSent: 3 });
    expect(resend.emails()).toEqual([]);
    expect(smtp.messages.map((m) => m.to[0]).sort()).toEqual(["p0@example.com", "p1@example.com", "p2@example.com"]);
    const p1 = smtp.messages.find((m) => m.to[0] === "p1@example.com")!;
    expect(p1.messageId).toBe(`<${run.runId}.out.1@localhost>`);
    expect(p1.raw).toMatch(/^Reply-To: P1@replies\.example\.com$/im);
    expect(p1.raw).toMatch(/^List-Unsubscribe:\s+<http:\/\/localhost:3000\/api\/unsubscribe\//im);
    const page = await listEmails(token, run.runId, "out");
    expect(page.body.counts).toMatchObject({ sent: 3, sending: 0, unknown: 0 });
    expect(page.body.items[1].providerMessageId).toBe(p1.messageId);
    // An account's own sender is observed like the deployment's transport: its emails in the metrics.
    const { body: metricsText } = await renderMetrics();
    expect(metricsText).toMatch(/^flowmail_emails_total\{transport="smtp",status="sent"\} [1-9]/m);
  });

  it("uses the account's default sender without a senderId, and the deployment's transport without a default", async () => {
    const { token, workflowId, senderId } = await setup({});
    const viaDeployment = await runToFinish(executor, token, workflowId);
    expect(viaDeployment.result).toMatchObject({ emailsSent: 3 });
    expect(resend.emails()).toHaveLength(3);
    expect(smtp.messages).toHaveLength(0);
    await senderApi(token).patch(senderId, { isDefault: true });
    const viaDefault = await runToFinish(executor, token, workflowId);
    expect(viaDefault.result).toMatchObject({ emailsSent: 3 });
    expect(smtp.messages).toHaveLength(3);
    expect(resend.emails()).toHaveLength(3);
  });

  it("sends from an account's own Resend sender's address, and from EMAIL_FROM through the deployment's transport", async () => {
    const account = await createTestAccount();
    const own = await senderApi(account.token).create({ kind: "resend", name: "Ours", from: "Acme <hello@acme.example>", resend: { apiKey: "re_own_key_0123456789" } });
    expect(own.status).toBe(201);
    const uploadId = await insertUpload(account.id, ["email", "name"], people(2));
    const viaOwn = await insertWorkflow(account.id, personGraph(uploadId, { senderId: own.body.id }));
    const viaDeployment = await insertWorkflow(account.id, personGraph(uploadId, {}));
    expect((await runToFinish(executor, account.token, viaOwn)).result).toMatchObject({ emailsSent: 2 });
    expect(resend.emails().map((e) => e.from)).toEqual(["Acme <hello@acme.example>", "Acme <hello@acme.example>"]);
    resend.reset();
    expect((await runToFinish(executor, account.token, viaDeployment)).result).toMatchObject({ emailsSent: 2 });
    expect(new Set(resend.emails().map((e) => e.from))).toEqual(new Set([process.env.EMAIL_FROM ?? "Flowmail <noreply@flowmail.local>"]));
  });

  it("carries the node's rendered Reply-To through the deployment's Resend transport too", async () => {
    const account = await createTestAccount();
    const uploadId = await insertUpload(account.id, ["email", "name"], people(2));
    const workflowId = await insertWorkflow(account.id, personGraph(uploadId, { replyTo: "{{item.name}}@replies.example.com" }));
    expect((await runToFinish(executor, account.token, workflowId)).result).toMatchObject({ emailsSent: 2 });
    expect(resend.emails().map((e) => e.headers?.["Reply-To"]).sort()).toEqual(["P0@replies.example.com", "P1@replies.example.com"]);
  });

  it("checks the SMTP host's address again when it sends, not only when the sender was saved", async () => {
    const { token, workflowId } = await setup({ senderId: "$sender" });
    // Saved while private addresses were allowed; by the time it sends, its address is one the guard refuses (as
    // when a name is rebound to a private address after the check).
    process.env.ALLOW_PRIVATE_NETWORK_TARGETS = "false";
    resetConfig();
    try {
      const connectionsBefore = smtp.connections;
      const run = await runToFinish(executor, token, workflowId);
      expect(run.status).toBe("FAILED");
      expect(smtp.messages).toHaveLength(0);
      expect(smtp.connections).toBe(connectionsBefore);
    } finally {
      delete process.env.ALLOW_PRIVATE_NETWORK_TARGETS;
      resetConfig();
    }
  });

  it("waits out 421 answers without dropping an email, through a pool of connections", async () => {
    const { token, workflowId } = await setup({ senderId: "$sender" }, people(30));
    smtp.throttleNext(4);
    const openBefore = smtp.open;
    const run = await runToFinish(executor, token, workflowId);
    expect(run.status).toBe("SUCCESS");
    expect(run.result).toMatchObject({ emailsSent: 30 });
    expect(new Set(smtp.messages.map((m) => m.to[0])).size).toBe(30);
    expect(smtp.messages).toHaveLength(30);
    expect(smtp.maxOpen - openBefore).toBeLessThanOrEqual(5);
  });

  it("marks a refused recipient failed with the server's sentence and sends the rest", async () => {
    const { token, workflowId } = await setup({ senderId: "$sender" }, people(4));
    smtp.refuse("p2@example.com");
    const run = await runToFinish(executor, token, workflowId);
    expect(run.status).toBe("SUCCESS");
    expect(run.result).toMatchObject({ emailsSent: 3, failed: 1 });
    expect(run.nodes.out.output).toMatchObject({ emailsSent: 3, failed: 1 });
    expect(smtp.messages.map((m) => m.to[0]).sort()).toEqual(["p0@example.com", "p1@example.com", "p3@example.com"]);
    const failed = await listEmails(token, run.runId, "out", "?status=failed");
    expect(failed.body.items).toEqual([expect.objectContaining({ to: "p2@example.com", status: "failed", error: expect.stringMatching(/^SMTP 550: .*p2@example\.com/) })]);
  });

  it("fails the node at once when the server refuses the sender's login", async () => {
    smtp.requireAuth("mailer", "the-right-one");
    const { token, workflowId } = await setup({ senderId: "$sender" }, people(5), { name: "Bad login" });
    const run = await runToFinish(executor, token, workflowId);
    expect(run.status).toBe("FAILED");
    expect(run.error).toMatch(/The SMTP server refused the sender: SMTP 535/);
    expect(smtp.messages).toHaveLength(0);
    const page = await listEmails(token, run.runId, "out");
    expect(page.body.counts).toMatchObject({ sent: 0, sending: 0, failed: 5 });
  });

  it("keeps the default sender a run began with: its retry sends through it after the account's default changed", async () => {
    smtp.requireAuth("mailer", "the-right-one");
    const { token, workflowId, senderId } = await setup({}, people(4), { isDefault: true });
    const first = await runToFinish(executor, token, workflowId);
    expect(first.status).toBe("FAILED");
    expect(first.error).toMatch(/The SMTP server refused the sender/);
    // The account no longer has a default sender: new runs go through the deployment's transport…
    expect((await senderApi(token).patch(senderId, { isDefault: false })).status).toBe(200);
    smtp.requireAuth("mailer", "s3cret-pass");
    const retried = await call(retryHandler, { method: "POST", path: `/api/workflows/runs/${first.runId}/retry`, token, params: { runId: first.runId } });
    expect(retried.status).toBe(202);
    const retry = await finished(executor, token, retried.body.runId as string);
    // …but the retry sends through the sender its chain began with.
    expect(retry.status).toBe("SUCCESS");
    expect(smtp.messages.map((m) => m.to[0]).sort()).toEqual(["p0@example.com", "p1@example.com", "p2@example.com", "p3@example.com"]);
    expect(resend.emails()).toHaveLength(0);
    const fresh = await runToFinish(executor, token, workflowId);
    expect(fresh.result).toMatchObject({ emailsSent: 4 });
    expect(resend.emails()).toHaveLength(4);
    expect(smtp.messages).toHaveLength(4);
  });
});
