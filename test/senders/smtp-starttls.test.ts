// The password of an SMTP sender without `secure` goes only after STARTTLS: the real nodemailer against a local server
// that offers no STARTTLS is refused before AUTH (the sender's refusal, with a sentence saying why), unless the host is
// this machine (a local relay).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createSmtpSender, isLocalHost } from "@/lib/email/smtp-sender";
import { EmailSendError } from "@/lib/email/types";
import { startFakeSmtp, type FakeSmtp } from "@/test/support/fake-smtp";

let smtp: FakeSmtp;
beforeAll(async () => {
  smtp = await startFakeSmtp();
});
afterAll(() => smtp.close());
beforeEach(() => smtp.reset());

const email = { kind: "workflow" as const, to: "p@example.com", subject: "Hi", text: "Hello" };

describe("SMTP without secure", () => {
  it("refuses to send the password to a server that offers no STARTTLS", async () => {
    smtp.requireAuth("mailer", "s3cret-pass");
    // Named as a remote server, connected here: the address the SSRF guard pinned.
    const sender = createSmtpSender({ host: "smtp.example.com", pinnedAddress: "127.0.0.1", port: smtp.port, secure: false, username: "mailer", password: "s3cret-pass", from: "team@example.com" });
    try {
      const error = await sender.send(email).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(EmailSendError);
      expect((error as EmailSendError).retryable).toBe(false);
      expect((error as EmailSendError).details.refused).toBe("sender");
      expect((error as Error).message).toMatch(/does not offer STARTTLS, and the password is only sent encrypted/);
      expect(smtp.authenticated).toBe(0);
      expect(smtp.messages).toHaveLength(0);
    } finally {
      sender.close();
    }
  });

  it("sends through a local relay without TLS, and without a password anywhere", async () => {
    const local = createSmtpSender({ host: "127.0.0.1", port: smtp.port, secure: false, username: "mailer", password: "s3cret-pass", from: "team@example.com" });
    const anonymous = createSmtpSender({ host: "smtp.example.com", pinnedAddress: "127.0.0.1", port: smtp.port, secure: false, from: "team@example.com" });
    try {
      await local.send(email);
      await anonymous.send(email);
      expect(smtp.messages).toHaveLength(2);
      expect(smtp.authenticated).toBe(1);
    } finally {
      local.close();
      anonymous.close();
    }
  });

  it("knows this machine's names", () => {
    for (const host of ["localhost", "LOCALHOST", "mail.localhost", "127.0.0.1", "127.1.2.3", "::1", "[::1]"]) expect(isLocalHost(host)).toBe(true);
    for (const host of ["smtp.example.com", "10.0.0.1", "localhost.example.com", "1127.0.0.1", "::2"]) expect(isLocalHost(host)).toBe(false);
  });
});
