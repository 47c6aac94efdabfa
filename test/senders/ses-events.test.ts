// SES bounces and complaints through SNS: messages signed with a test certificate (served by a test stand-in for
// SNS's address — the host check runs before it), verified, the subscription confirmed, permanent bounces and
// complaints suppressed for the sender's account; 401 for a bad signature or a certificate elsewhere, 404 for an
// unknown or non-SES sender.
import { createSign } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as sesEvents } from "@/app/api/integrations/ses/events/[senderId]/route";
import { GET as listSuppressions } from "@/app/api/suppressions/route";
import { setSnsFetcherForTests, stringToSign, type SnsMessage } from "@/lib/email/sns-verify";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";
import { senderApi, smtpSender } from "./helpers";

const dir = path.join(process.cwd(), "test/support/sns");
const cert = readFileSync(path.join(dir, "test-cert.pem"), "utf8");
const key = readFileSync(path.join(dir, "test-key.pem"), "utf8");
const CERT_URL = "https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-test.pem";
const fetched: string[] = [];

beforeAll(() =>
  setSnsFetcherForTests(async (url) => {
    fetched.push(url);
    if (url === CERT_URL) return cert;
    if (url.startsWith("https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription")) return "<ConfirmSubscriptionResponse/>";
    throw new Error("unknown address");
  }),
);
afterAll(() => setSnsFetcherForTests(undefined));

function signed(fields: Partial<SnsMessage>, version = "1"): SnsMessage {
  const m = {
    Type: "Notification", MessageId: "m-1", TopicArn: "arn:aws:sns:eu-west-1:123456789012:ses-events", Message: "{}",
    Timestamp: "2026-11-27T20:00:00.000Z", SignatureVersion: version, SigningCertURL: CERT_URL, Signature: "", ...fields,
  } as SnsMessage;
  m.Signature = createSign(version === "1" ? "RSA-SHA1" : "RSA-SHA256").update(stringToSign(m)).sign(key, "base64");
  return m;
}

const post = (senderId: string, body: unknown) =>
  call(sesEvents, { method: "POST", path: `/api/integrations/ses/events/${senderId}`, params: { senderId }, body: JSON.stringify(body), headers: { "content-type": "text/plain; charset=UTF-8" } });

async function sesSenderOf() {
  const account = await createTestAccount();
  const made = await senderApi(account.token).create({
    kind: "ses", name: "SES", from: "news@example.com",
    ses: { region: "eu-west-1", accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" },
    ratePerSecond: 5, dailyQuota: 100,
  });
  return { ...account, senderId: made.body.id as string };
}

describe("SES events through SNS", () => {
  it("confirms the subscription, suppresses permanent bounces and complaints, ignores transient bounces", async () => {
    const { token, senderId } = await sesSenderOf();
    const confirm = await post(senderId, signed({
      Type: "SubscriptionConfirmation", Token: "tok", Message: "You have chosen to subscribe…",
      SubscribeURL: "https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=x&Token=tok",
    }));
    expect(confirm).toMatchObject({ status: 200, body: { handled: true } });
    expect(fetched).toContain("https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=x&Token=tok");

    const bounce = { notificationType: "Bounce", bounce: { bounceType: "Permanent", bouncedRecipients: [{ emailAddress: "Gone@Example.com" }] } };
    expect((await post(senderId, signed({ Message: JSON.stringify(bounce) }))).body).toEqual({ handled: true });
    const complaint = { eventType: "Complaint", complaint: { complainedRecipients: [{ emailAddress: "angry@example.com" }] } };
    expect((await post(senderId, signed({ Message: JSON.stringify(complaint), MessageId: "m-2" }, "2"))).body).toEqual({ handled: true });
    const transient = { notificationType: "Bounce", bounce: { bounceType: "Transient", bouncedRecipients: [{ emailAddress: "full@example.com" }] } };
    expect((await post(senderId, signed({ Message: JSON.stringify(transient), MessageId: "m-3" }))).body).toEqual({ handled: false });

    const list = await call(listSuppressions, { path: "/api/suppressions", token });
    expect(list.body.items.map((i: { email: string; reason: string }) => [i.email, i.reason]).sort()).toEqual([
      ["angry@example.com", "complained"],
      ["gone@example.com", "bounced"],
    ]);
    // The certificate was fetched once and cached.
    expect(fetched.filter((u) => u === CERT_URL)).toHaveLength(1);
  });

  it("takes events only from the topic it confirmed: another account's topic answers 403 and suppresses nothing", async () => {
    const { token, senderId } = await sesSenderOf();
    const bounce = JSON.stringify({ notificationType: "Bounce", bounce: { bounceType: "Permanent", bouncedRecipients: [{ emailAddress: "victim@example.com" }] } });
    // Before any confirmation, a notification is refused; so is a confirmation of a topic in another region.
    expect((await post(senderId, signed({ Message: bounce }))).status).toBe(403);
    const before = fetched.length;
    const elsewhere = await post(senderId, signed({
      Type: "SubscriptionConfirmation", Token: "t2", TopicArn: "arn:aws:sns:us-east-1:999999999999:attacker",
      SubscribeURL: "https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=y&Token=t2",
    }));
    expect(elsewhere.status).toBe(403);
    expect(fetched.length).toBe(before);
    const confirm = await post(senderId, signed({
      Type: "SubscriptionConfirmation", Token: "tok", Message: "You have chosen to subscribe…",
      SubscribeURL: "https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=x&Token=tok",
    }));
    expect(confirm.status).toBe(200);
    // A second topic in the same region (someone else's) is refused, after the first one was confirmed.
    const other = { TopicArn: "arn:aws:sns:eu-west-1:999999999999:attacker" };
    expect((await post(senderId, signed({ ...other, Message: bounce }))).status).toBe(403);
    expect((await post(senderId, signed({ ...other, Type: "SubscriptionConfirmation", Token: "t3", SubscribeURL: "https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=z&Token=t3" }))).status).toBe(403);
    expect((await call(listSuppressions, { path: "/api/suppressions", token })).body.items).toEqual([]);
    expect((await post(senderId, signed({ Message: bounce }))).body).toEqual({ handled: true });
    expect((await call(listSuppressions, { path: "/api/suppressions", token })).body.items.map((i: { email: string }) => i.email)).toEqual(["victim@example.com"]);
  });

  it("answers 401 for a bad signature or a certificate anywhere but SNS, 404 for an unknown or non-SES sender", async () => {
    const { senderId, token } = await sesSenderOf();
    const bounce = JSON.stringify({ notificationType: "Bounce", bounce: { bounceType: "Permanent", bouncedRecipients: [{ emailAddress: "x@example.com" }] } });
    const tampered = { ...signed({ Message: bounce }), MessageId: "other" };
    expect((await post(senderId, tampered)).status).toBe(401);
    const before = fetched.length;
    for (const url of ["https://evil.example.com/cert.pem", "http://sns.eu-west-1.amazonaws.com/c.pem", "https://sns.eu-west-1.amazonaws.com.evil.io/c.pem", "https://sns.eu-west-1.amazonaws.com:8443/c.pem"]) {
      expect((await post(senderId, signed({ Message: bounce, SigningCertURL: url }))).status).toBe(401);
    }
    expect(fetched.length).toBe(before); // refused before any request
    expect((await post(senderId, "not json")).status).toBe(401);
    expect((await post("snd_AAAAAAAAAAAAAAAAAAAAAA", signed({ Message: bounce }))).status).toBe(404);
    const smtpOne = await senderApi(token).create(smtpSender(2525));
    expect((await post(smtpOne.body.id, signed({ Message: bounce }))).status).toBe(404);
    const list = await call(listSuppressions, { path: "/api/suppressions", token });
    expect(list.body.items).toEqual([]);
  });
});
