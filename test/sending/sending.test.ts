// CONTRACT 11 through the real route handlers and the real Resend SDK against the fake Resend: recipients
// (normalised, deduped, suppressed), one-click unsubscribe headers and endpoint, previews and the emails of a run.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { GET as unsubscribePage, POST as unsubscribePost } from "@/app/api/unsubscribe/[token]/route";
import { resetConfig } from "@/lib/config";
import type { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { createTestAccount } from "@/test/support/accounts";
import { clearResendTransport, startFakeResend, useResendTransport, type FakeResend } from "@/test/support/fake-resend";
import { call } from "@/test/support/http";
import { enqueue, getRun, insertUpload, insertWorkflow, runToEnd, startTestExecutor, stopTestExecutor } from "@/test/runs/helpers";
import { enqueueWith, listEmails, personGraph } from "./helpers";
import { POST as addSuppressions } from "@/app/api/suppressions/route";

let resend: FakeResend;
let executor: EmbeddedExecutor;

beforeAll(async () => {
  resend = await startFakeResend();
  useResendTransport(resend.url);
  executor = startTestExecutor(2);
});
afterAll(async () => {
  await stopTestExecutor();
  await resend.close();
  clearResendTransport();
});
beforeEach(() => resend.reset());

const rows = [
  ["Ann@Example.com ", "Ann"],
  ["bob@example.com", "Bob"],
  ["ann@example.com", "Ann again"],
  ["cy@example.com", "Cy"],
];

async function setup(out: Record<string, unknown> = {}) {
  const account = await createTestAccount();
  const uploadId = await insertUpload(account.id, ["email", "name"], rows);
  const workflowId = await insertWorkflow(account.id, personGraph(uploadId, out));
  return { ...account, workflowId };
}

describe("a live run", () => {
  it("normalises and dedupes recipients, skips suppressed ones, counts both, and sends one-click unsubscribe headers", async () => {
    const { token, workflowId } = await setup({ body: "Hello {{item.name}}, leave: {{unsubscribeUrl}}" });
    const added = await call(addSuppressions, { method: "POST", path: "/api/suppressions", token, json: { emails: [" CY@example.com"] } });
    expect(added).toMatchObject({ status: 200, body: { added: 1 } });

    const run = await runToEnd(executor, token, workflowId);
    expect(run.status).toBe("SUCCESS");
    expect(run.result).toEqual({ emailsSent: 2, filteredOut: 0, totalRows: 4, suppressed: 1, duplicates: 1 });
    expect(run.nodes.out.output).toEqual({ emailsSent: 2, suppressed: 1, duplicates: 1 });

    const emails = resend.emails();
    expect(emails.map((e) => e.to[0]).sort()).toEqual(["ann@example.com", "bob@example.com"]);
    const ann = emails.find((e) => e.to[0] === "ann@example.com")!;
    const link = /^<(http:\/\/localhost:3000\/api\/unsubscribe\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)>$/.exec(ann.headers?.["List-Unsubscribe"] ?? "");
    expect(link).not.toBeNull();
    expect(ann.headers?.["List-Unsubscribe-Post"]).toBe("List-Unsubscribe=One-Click");
    expect(ann.text).toBe(`Hello Ann, leave: ${link![1]}`);

    const page = await listEmails(token, run.runId, "out");
    expect(page.status).toBe(200);
    expect(page.body.counts).toEqual({ pending: 0, sent: 2, suppressed: 1, duplicate: 1, failed: 0, preview: 0, sending: 0, unknown: 0 });
    expect(page.body.items.map((e: { index: number; to: string; status: string }) => [e.index, e.to, e.status])).toEqual([
      [0, "ann@example.com", "sent"],
      [1, "bob@example.com", "sent"],
      [2, "ann@example.com", "duplicate"],
      [3, "cy@example.com", "suppressed"],
    ]);
    expect(page.body.items[0]).toMatchObject({ subject: "Hi Ann", providerMessageId: ann.id, error: null });
    expect(page.body.items[0].sentAt).toEqual(expect.any(String));
    const sentOnly = await listEmails(token, run.runId, "out", "?status=sent&offset=1&limit=1");
    expect(sentOnly.body).toMatchObject({ total: 2, items: [{ index: 1, to: "bob@example.com" }] });
  });

  it("sends to every item with dedupe: false, and without unsubscribe headers when transactional", async () => {
    const { token, workflowId } = await setup({ dedupe: false, unsubscribe: false });
    const run = await runToEnd(executor, token, workflowId);
    expect(run.result).toMatchObject({ emailsSent: 4, suppressed: 0, duplicates: 0 });
    expect(resend.emails()).toHaveLength(4);
    expect(resend.emails().every((e) => e.headers === undefined)).toBe(true);
  });

  it("an unsubscribe link POSTed without cookie or auth suppresses the address for the next run; GET only shows a button", async () => {
    const { token, workflowId } = await setup();
    await runToEnd(executor, token, workflowId);
    const url = resend.emailsTo("bob@example.com")[0].headers!["List-Unsubscribe"].slice(1, -1);
    const tokenPart = url.split("/").pop()!;
    const path = new URL(url).pathname;

    const page = await call(unsubscribePage, { path, params: { token: tokenPart } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.text).toContain("bob@example.com");
    expect(page.text).toMatch(/<form method="post">[\s\S]*<button type="submit">Unsubscribe<\/button>/);

    const notYet = await runToEnd(executor, token, workflowId);
    expect(notYet.result.suppressed).toBe(0); // GET changed nothing

    const body = "List-Unsubscribe=One-Click";
    const headers = { "content-type": "application/x-www-form-urlencoded" };
    const first = await call(unsubscribePost, { method: "POST", path, params: { token: tokenPart }, body, headers });
    expect(first).toMatchObject({ status: 200, body: { unsubscribed: true, email: "bob@example.com" } });
    const again = await call(unsubscribePost, { method: "POST", path, params: { token: tokenPart }, body, headers });
    expect(again.status).toBe(200);

    resend.reset();
    const next = await runToEnd(executor, token, workflowId);
    expect(next.result).toMatchObject({ emailsSent: 2, suppressed: 1, duplicates: 1 });
    expect(resend.emailsTo("bob@example.com")).toHaveLength(0);

    const forged = tokenPart.replace(/.$/, (c) => (c === "A" ? "B" : "A"));
    const bad = await call(unsubscribePost, { method: "POST", path: `/api/unsubscribe/${forged}`, params: { token: forged }, body, headers });
    expect(bad.status).toBe(400);
    expect(bad.headers.get("content-type")).toMatch(/problem\+json/);
    const badPage = await call(unsubscribePage, { path: `/api/unsubscribe/${forged}`, params: { token: forged }, headers: { accept: "text/html" } });
    expect(badPage.status).toBe(400);
    expect(badPage.text).toContain("This link does not work");
    const badJson = await call(unsubscribePage, { path: `/api/unsubscribe/${forged}`, params: { token: forged } });
    expect(badJson).toMatchObject({ status: 400, body: { code: "bad_request" } });
  });
});

describe("a preview", () => {
  it("renders, dedupes and checks suppression for every email, sends nothing, and records each with its body", async () => {
    const { token, workflowId } = await setup({ format: "html", body: "<p>Hi {{item.name}}</p>" });
    await call(addSuppressions, { method: "POST", path: "/api/suppressions", token, json: { emails: ["cy@example.com"] } });
    const res = await enqueueWith(token, workflowId, { mode: "preview" });
    expect(res.status).toBe(202);
    await executor.idle();
    const run = (await getRun(token, res.body.runId)).body;
    expect(run).toMatchObject({ status: "SUCCESS", mode: "preview" });
    expect(run.result).toEqual({ emailsSent: 0, emailsPlanned: 2, filteredOut: 0, totalRows: 4, suppressed: 1, duplicates: 1 });
    expect(run.nodes.out.output).toEqual({ emailsSent: 0, emailsPlanned: 2, suppressed: 1, duplicates: 1 });
    expect(resend.requests).toHaveLength(0);

    const page = await listEmails(token, run.runId, "out", "?status=preview");
    expect(page.body.total).toBe(2);
    expect(page.body.items[1]).toMatchObject({ index: 1, to: "bob@example.com", subject: "Hi Bob", status: "preview", body: "<p>Hi Bob</p>", format: "html" });
  });

  it("refuses bodies it does not understand", async () => {
    const { token, workflowId } = await setup();
    const unknown = await enqueueWith(token, workflowId, { mode: "preview", extra: 1 });
    expect(unknown.status).toBe(422);
    const badMode = await enqueueWith(token, workflowId, { mode: "dry" });
    expect(badMode.status).toBe(422);
    const untilLive = await enqueueWith(token, workflowId, { until: "src" });
    expect(untilLive).toMatchObject({ status: 422, body: { errors: [{ path: "until", code: "until_requires_preview" }] } });
    const untilUnknown = await enqueueWith(token, workflowId, { mode: "preview", until: "nope" });
    expect(untilUnknown).toMatchObject({ status: 422, body: { errors: [{ path: "until", code: "unknown_node" }] } });
    const notJson = await enqueueWith(token, workflowId, undefined, {});
    expect(notJson.status).toBe(202); // no body: a live run, as before
    const live = await enqueueWith(token, workflowId, { mode: "live" });
    expect(live.status).toBe(202);
    await executor.idle();
    expect((await getRun(token, live.body.runId)).body.mode).toBe("live");
  });
});

describe("the emails endpoint", () => {
  it("answers 404 for a node that is not an OUTPUT, another account's run, and a bad limit with 422", async () => {
    const { token, workflowId } = await setup();
    const run = await runToEnd(executor, token, workflowId);
    expect((await listEmails(token, run.runId, "src")).status).toBe(404);
    expect((await listEmails(token, run.runId, "nope")).status).toBe(404);
    const other = await createTestAccount();
    expect((await listEmails(other.token, run.runId, "out")).status).toBe(404);
    expect((await listEmails(token, run.runId, "out", "?limit=1001")).status).toBe(422);
    expect((await listEmails(token, run.runId, "out", "?status=bogus")).status).toBe(422);
  });

  it("lists the emails of a run that is still pending as empty", async () => {
    const { token, workflowId } = await setup();
    const res = await enqueue(token, workflowId);
    const page = await listEmails(token, res.body.runId, "out");
    expect(page.status).toBe(200);
    await executor.idle();
  });
});

describe("progress", () => {
  it("a running OUTPUT node carries progress { sent, total } that rises batch by batch", { timeout: 120_000 }, async () => {
    clearResendTransport();
    process.env.MAILBOX_RATE_PER_SECOND = "5";
    resetConfig();
    try {
      const account = await createTestAccount();
      const many = Array.from({ length: 1000 }, (_, i) => [`p${i}@example.com`, `P${i}`]);
      const uploadId = await insertUpload(account.id, ["email", "name"], many);
      const workflowId = await insertWorkflow(account.id, personGraph(uploadId));
      const res = await enqueue(account.token, workflowId);
      const seen: number[] = [];
      for (;;) {
        const run = (await getRun(account.token, res.body.runId)).body;
        const progress = run.nodes.out?.progress;
        if (progress) {
          expect(progress.total).toBe(1000);
          seen.push(progress.sent);
        }
        if (run.status === "SUCCESS" || run.status === "FAILED") break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await executor.idle();
      expect(new Set(seen).size).toBeGreaterThanOrEqual(2);
      expect(seen).toEqual([...seen].sort((a, b) => a - b));
    } finally {
      delete process.env.MAILBOX_RATE_PER_SECOND;
      useResendTransport(resend.url);
    }
  });
});
