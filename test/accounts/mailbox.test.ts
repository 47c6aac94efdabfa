// The embedded transport: with no RESEND_API_KEY every email lands in the database mailbox,
// readable at GET /api/dev/mailbox (only while that transport is active).
import { describe, expect, it } from "vitest";
import { GET as mailbox } from "@/app/api/dev/mailbox/route";
import { resetConfig } from "@/lib/config";
import { getEmailSender } from "@/lib/email";
import { call } from "@/test/support/http";
import { codeFromSubject, registerOk, uniqueEmail, verifyOk } from "./helpers";

const list = (query: string) => call(mailbox, { path: `/api/dev/mailbox${query}` });

describe("the local mailbox", () => {
  it("receives the OTP email, which verifies the account", async () => {
    const email = uniqueEmail();
    await registerOk(email, "correct horse battery", "Grace Hopper");
    const res = await list(`?to=${encodeURIComponent(email)}`);
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    expect(res.body.items).toHaveLength(1);
    const [message] = res.body.items;
    expect(message).toEqual({
      id: expect.stringMatching(/^msg_/), from: "Flowmail <noreply@flowmail.local>", to: email,
      subject: expect.stringMatching(/^Your Flowmail code: \d{6}$/), text: expect.stringContaining("Hi Grace Hopper,"),
      html: expect.stringContaining("Grace Hopper"), kind: "otp", headers: {}, createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
    });
    const code = codeFromSubject(message.subject);
    expect(message.text).toContain(code);
    await verifyOk(email, code);
  });

  it("escapes the name in the HTML body", async () => {
    const email = uniqueEmail();
    await registerOk(email, "correct horse battery", "<script>x</script>");
    const [message] = (await list(`?to=${encodeURIComponent(email)}`)).body.items;
    expect(message.html).not.toContain("<script>");
    expect(message.html).toContain("&lt;script&gt;");
  });

  it("lists newest first with cursor pagination, filtered by recipient", async () => {
    const sender = getEmailSender();
    expect(sender.name).toBe("mailbox");
    const to = uniqueEmail("paged");
    for (let i = 0; i < 5; i++) {
      await sender.send({ to, subject: `message ${i}`, text: `body ${i}`, kind: "workflow" });
    }
    await sender.send({ to: uniqueEmail("someone-else"), subject: "not mine", text: "x", kind: "workflow" });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await list(`?to=${encodeURIComponent(to)}&limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.items.map((m: { subject: string }) => m.subject));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(["message 4", "message 3", "message 2", "message 1", "message 0"]);
    expect((await list("?limit=0")).status).toBe(422);
    expect((await list("?cursor=garbage")).status).toBe(422);
  });

  it("stores a repeated idempotency key once, for single sends and batches", async () => {
    const sender = getEmailSender();
    const to = uniqueEmail("idem");
    const first = await sender.send({ to, subject: "once", text: "x", kind: "workflow", idempotencyKey: `k-${to}` });
    const again = await sender.send({ to, subject: "once", text: "x", kind: "workflow", idempotencyKey: `k-${to}` });
    expect(again.id).toBe(first.id);
    const batch = [0, 1, 2].map((i) => ({ to, subject: `batch ${i}`, text: "x", kind: "workflow" as const }));
    const a = await sender.sendBatch(batch, `batch-${to}`);
    const b = await sender.sendBatch(batch, `batch-${to}`);
    expect(b.map((r) => r.id)).toEqual(a.map((r) => r.id));
    const res = await list(`?to=${encodeURIComponent(to)}`);
    expect(res.body.items.map((m: { subject: string }) => m.subject).sort()).toEqual(["batch 0", "batch 1", "batch 2", "once"]);
  });

  it("does not exist while Resend is the transport", async () => {
    process.env.RESEND_API_KEY = "re_test";
    resetConfig();
    try {
      const res = await list("");
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("not_found");
      expect(getEmailSender().name).toBe("resend");
    } finally {
      delete process.env.RESEND_API_KEY;
      resetConfig();
    }
  });
});
