// The Resend transport against a local fake Resend: request shape, idempotency keys, and the mapping of
// the SDK's `{ error }` answers to EmailSendError (retryable or not, Retry-After).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeResend, type FakeResend } from "@/test/support/fake-resend";
import { createResendSender } from "./resend-sender";
import { EmailSendError, type OutgoingEmail } from "./types";

let fake: FakeResend;
beforeAll(async () => {
  fake = await startFakeResend();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const sender = () => createResendSender({ apiKey: "re_test", baseUrl: fake.url, from: "Flowmail <noreply@flowmail.local>" });
const emails = (n: number): OutgoingEmail[] =>
  Array.from({ length: n }, (_, i) => ({ to: `r${i}@example.com`, subject: `s${i}`, text: `t${i}`, html: `<p>${i}</p>`, kind: "workflow" }));

async function sendError(promise: Promise<unknown>): Promise<EmailSendError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(EmailSendError);
  return error as EmailSendError;
}

describe("Resend sender", () => {
  it("sends one email with its idempotency key", async () => {
    const result = await sender().send({ to: "a@example.com", subject: "Hi", text: "Hello", kind: "otp", idempotencyKey: "otp:1" });
    expect(result.id).toEqual(expect.any(String));
    const [request] = fake.requests;
    expect(request.path).toBe("/emails");
    expect(request.headers["idempotency-key"]).toBe("otp:1");
    expect(request.body).toMatchObject({ from: "Flowmail <noreply@flowmail.local>", to: "a@example.com", subject: "Hi", text: "Hello" });
  });

  it("sends a batch in one call with the batch key, and a repeated key delivers nothing twice", async () => {
    const first = await sender().sendBatch(emails(3), "run_1:out:0");
    const second = await sender().sendBatch(emails(3), "run_1:out:0");
    expect(second).toEqual(first);
    expect(fake.emails()).toHaveLength(3);
    expect(fake.requests.map((r) => [r.path, r.headers["idempotency-key"]])).toEqual([
      ["/emails/batch", "run_1:out:0"],
      ["/emails/batch", "run_1:out:0"],
    ]);
  });

  it("refuses more than 100 emails per batch without calling Resend", async () => {
    const error = await sendError(sender().sendBatch(emails(101), "k"));
    expect(error.retryable).toBe(false);
    expect(fake.requests).toHaveLength(0);
    await sender().sendBatch(emails(100), "k100");
    expect(fake.emails()).toHaveLength(100);
  });

  it("maps 429 to a retryable error with Retry-After", async () => {
    fake.failNext(1, 429, 7);
    const error = await sendError(sender().sendBatch(emails(2), "k"));
    expect(error).toMatchObject({ retryable: true, retryAfterSeconds: 7 });
    expect(error.message).toContain("429");
  });

  it.each([500, 502, 503])("maps %i to a retryable error, and the retry with the same key delivers once", async (status) => {
    fake.failNext(1, status);
    const error = await sendError(sender().sendBatch(emails(2), "k-retry"));
    expect(error.retryable).toBe(true);
    await sender().sendBatch(emails(2), "k-retry");
    expect(fake.emails()).toHaveLength(2);
  });

  it("maps a dropped connection to a retryable error", async () => {
    fake.failNext(1, "network");
    const error = await sendError(sender().send({ to: "a@example.com", subject: "s", text: "t", kind: "workflow" }));
    expect(error.retryable).toBe(true);
  });

  it.each([400, 401, 403, 422])("maps %i to a permanent error", async (status) => {
    fake.failNext(1, status);
    const error = await sendError(sender().send({ to: "a@example.com", subject: "s", text: "t", kind: "workflow" }));
    expect(error.retryable).toBe(false);
  });

  it("treats the same key with a different body as a permanent error", async () => {
    await sender().send({ to: "a@example.com", subject: "one", text: "t", kind: "workflow", idempotencyKey: "same" });
    const error = await sendError(sender().send({ to: "a@example.com", subject: "two", text: "t", kind: "workflow", idempotencyKey: "same" }));
    expect(error.retryable).toBe(false);
    expect(fake.emails()).toHaveLength(1);
  });
});
