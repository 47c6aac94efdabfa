// Senders through the real route handlers: CRUD, secrets never returned, the test email through nodemailer to a local
// SMTP server, the account default, and DELETE refused while an OUTPUT node names the sender.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { senders } from "@/db/schema";
import { eq } from "drizzle-orm";
import { createTestAccount } from "@/test/support/accounts";
import { startFakeSmtp, type FakeSmtp } from "@/test/support/fake-smtp";
import { insertUpload, insertWorkflow } from "@/test/runs/helpers";
import * as validateRoute from "@/app/api/workflows/validate/route";
import { call } from "@/test/support/http";
import { senderApi, smtpSender } from "./helpers";

let smtp: FakeSmtp;
beforeAll(async () => {
  smtp = await startFakeSmtp();
});
afterAll(() => smtp.close());

describe("senders", () => {
  it("creates, lists, changes and deletes a sender without ever returning its secret", async () => {
    const { token } = await createTestAccount();
    const api = senderApi(token);
    const made = await api.create(smtpSender(smtp.port, { replyTo: "help@example.com", isDefault: true }));
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({
      kind: "smtp", name: "Our SMTP", from: "Team <team@example.com>", replyTo: "help@example.com", isDefault: true,
      ratePerSecond: null, dailyQuota: null, lastError: null,
      smtp: { host: "127.0.0.1", port: smtp.port, secure: false, username: "mailer", passwordLast4: "pass" },
    });
    expect(made.body.id).toMatch(/^snd_[A-Za-z0-9_-]{22}$/);
    expect(JSON.stringify(made.body)).not.toContain("s3cret");
    const [row] = await (await getDb()).select().from(senders).where(eq(senders.id, made.body.id));
    expect(row.secretEncrypted).toMatch(/^v1\./);
    expect(row.secretEncrypted).not.toContain("s3cret");

    const second = await api.create({ kind: "resend", name: "R", from: "r@example.com", resend: { apiKey: "re_123456789abcd" }, isDefault: true });
    expect(second.body).toMatchObject({ isDefault: true, resend: { keyLast4: "abcd" } });
    const listed = await api.list();
    expect(listed.body.items.map((s: { id: string; isDefault: boolean }) => [s.id, s.isDefault])).toEqual([
      [made.body.id, false],
      [second.body.id, true],
    ]);

    // A PATCH without the password keeps it.
    const patched = await api.patch(made.body.id, { name: "Renamed", smtp: { host: "127.0.0.1", port: smtp.port, secure: false, username: "mailer" }, ratePerSecond: 50 });
    expect(patched.body).toMatchObject({ name: "Renamed", ratePerSecond: 50, smtp: { passwordLast4: "pass" } });
    expect((await api.remove(made.body.id)).status).toBe(204);
    expect((await api.remove(made.body.id)).status).toBe(404);
  });

  it("refuses a sender without the settings of its kind, with another kind's, or with a bad from", async () => {
    const { token } = await createTestAccount();
    const api = senderApi(token);
    const missing = await api.create({ kind: "ses", name: "S", from: "a@example.com" });
    expect(missing.status).toBe(422);
    expect(missing.body.errors[0].path).toBe("ses");
    const other = await api.create({ ...smtpSender(smtp.port), resend: { apiKey: "re_123456789" } });
    expect(other.status).toBe(422);
    expect(other.body.errors.map((e: { path: string }) => e.path)).toContain("resend");
    const badFrom = await api.create(smtpSender(smtp.port, { from: "Team <not an address>" }));
    expect(badFrom.status).toBe(422);
    expect(badFrom.body.errors[0].path).toBe("from");
    const unknownField = await api.create(smtpSender(smtp.port, { colour: "red" }));
    expect(unknownField.status).toBe(422);
    expect((await api.list()).body.items).toEqual([]);
  });

  it("hides another account's sender (404) and refuses to delete one an OUTPUT node names (409 naming the workflow)", async () => {
    const a = await createTestAccount();
    const b = await createTestAccount();
    const made = await senderApi(a.token).create(smtpSender(smtp.port));
    expect((await senderApi(b.token).patch(made.body.id, { name: "x" })).status).toBe(404);
    expect((await senderApi(b.token).remove(made.body.id)).status).toBe(404);
    expect((await senderApi(b.token).test(made.body.id)).status).toBe(404);
    await insertWorkflow(a.id, {
      nodes: [
        { id: "t", type: "TRIGGER", data: {} },
        { id: "out", type: "OUTPUT", data: { forEach: "{{t.rows}}", to: "{{item.email}}", subject: "s", body: "b", senderId: made.body.id } },
      ],
      edges: [{ source: "t", target: "out" }],
    }, "Weekly digest");
    const refused = await senderApi(a.token).remove(made.body.id);
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("sender_in_use");
    expect(refused.body.detail).toContain('"Weekly digest"');
  });

  it("refuses at save time an OUTPUT naming a sender the account does not have (another account's, or none)", async () => {
    const a = await createTestAccount();
    const b = await createTestAccount();
    const mine = (await senderApi(a.token).create(smtpSender(smtp.port))).body.id as string;
    const theirs = (await senderApi(b.token).create(smtpSender(smtp.port))).body.id as string;
    const uploadId = await insertUpload(a.id, ["email"], [["p@example.com"]]);
    const graph = (senderId: string) => ({
      nodes: [
        { id: "t", type: "TRIGGER", data: {} },
        { id: "src", type: "DATA_SOURCE", data: { uploadId } },
        { id: "out", type: "OUTPUT", data: { forEach: "{{src.rows}}", to: "{{item.email}}", subject: "s", body: "b", senderId } },
      ],
      edges: [{ source: "t", target: "src" }, { source: "src", target: "out" }],
    });
    const validate = (senderId: string) => call(validateRoute.POST, { json: { graph: graph(senderId) }, token: a.token });
    expect((await validate(mine)).body).toEqual({ valid: true, errors: [] });
    for (const senderId of [theirs, "snd_doesnotexist"]) {
      const answer = await validate(senderId);
      expect(answer.body.valid).toBe(false);
      expect(answer.body.errors).toEqual([
        { code: "invalid_node_data", path: "graph.nodes[2].data.senderId", nodeId: "out", message: `Sender ${senderId} does not exist (or was deleted): choose one in Settings → Senders` },
      ]);
    }
  });

  it("sends a test email to the account's own address through the sender, and reports a refusal as 422", async () => {
    const { token, email } = await createTestAccount();
    const api = senderApi(token);
    const made = await api.create(smtpSender(smtp.port));
    const before = smtp.messages.length;
    const tested = await api.test(made.body.id);
    expect(tested.status).toBe(200);
    expect(smtp.messages.length).toBe(before + 1);
    const message = smtp.messages.at(-1)!;
    expect(message.to).toEqual([email]);
    expect(message.from).toBe("team@example.com");
    expect(tested.body.messageId).toBe(message.messageId);

    smtp.requireAuth("mailer", "another-password");
    try {
      const wrong = await api.create(smtpSender(smtp.port, { name: "Wrong password" }));
      const failed = await api.test(wrong.body.id);
      expect(failed.status).toBe(422);
      expect(failed.body.code).toBe("sender_test_failed");
      expect(failed.body.detail).toContain("SMTP");
      expect((await api.list()).body.items.map((s: { lastError: string | null }) => s.lastError)).toEqual([null, expect.stringContaining("SMTP 535")]);
    } finally {
      smtp.reset();
    }
  });
});
