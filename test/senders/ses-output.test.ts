// OUTPUT through an account's Amazon SES sender: the real @aws-sdk/client-sesv2 against a local fake of SES's v2 API
// (SES_ENDPOINT). The pace comes from the account's MaxSendRate (GetAccount); throttling answers are waited out and
// no email is dropped or sent twice; MessageRejected fails that email only; an unverified from fails the node.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { resetConfig } from "@/lib/config";
import type { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { createTestAccount } from "@/test/support/accounts";
import { startFakeSes, type FakeSes } from "@/test/support/fake-ses";
import { enqueue, insertUpload, insertWorkflow, startTestExecutor, stopTestExecutor } from "@/test/runs/helpers";
import { listEmails, personGraph } from "@/test/sending/helpers";
import { finished, runToFinish, senderApi } from "./helpers";

let ses: FakeSes;
let executor: EmbeddedExecutor;

beforeAll(async () => {
  ses = await startFakeSes({ maxSendRate: 40, max24HourSend: 1000 });
  process.env.SES_ENDPOINT = ses.url;
  resetConfig();
  executor = startTestExecutor(4);
});
afterAll(async () => {
  await stopTestExecutor();
  await ses.close();
  delete process.env.SES_ENDPOINT;
  resetConfig();
});
beforeEach(() => ses.reset());

const people = (n: number, tag = "p") => Array.from({ length: n }, (_, i) => [`${tag}${i}@example.com`, `P${i}`]);

const sesSender = (extra: Record<string, unknown> = {}) => ({
  kind: "ses",
  name: "SES",
  from: "News <news@example.com>",
  ses: { region: "eu-west-1", accessKeyId: `AKIA${Math.random().toString(36).slice(2, 14).toUpperCase().padEnd(16, "X")}`, secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" },
  ...extra,
});

async function workflowFor(account: { id: string }, senderId: string, rows: string[][]) {
  const uploadId = await insertUpload(account.id, ["email", "name"], rows);
  return insertWorkflow(account.id, personGraph(uploadId, { senderId }));
}

describe("OUTPUT through an SES sender", () => {
  it("sends each email once at the account's MaxSendRate, raw MIME with the Message-ID, across four workflows sharing the sender", async () => {
    const account = await createTestAccount();
    const made = await senderApi(account.token).create(sesSender());
    expect(made.status).toBe(201);
    expect(made.body.ses).toMatchObject({ region: "eu-west-1", secretLast4: "EKEY" });
    const workflows = await Promise.all([0, 1, 2, 3].map((w) => workflowFor(account, made.body.id, people(8, `w${w}-`))));
    const runIds: string[] = [];
    for (const workflowId of workflows) runIds.push((await enqueue(account.token, workflowId)).body.runId);
    for (const runId of runIds) {
      const run = await finished(executor, account.token, runId);
      expect(run.status).toBe("SUCCESS");
      expect(run.result).toMatchObject({ emailsSent: 8 });
    }
    expect(ses.emails).toHaveLength(32);
    expect(new Set(ses.emails.map((e) => e.to[0])).size).toBe(32);
    // Paced at the account's rate of 40/s (read from GetAccount): a call SES refused (network jitter can bunch two
    // calls into one second's window) was made again, and nothing else was.
    expect(ses.calls).toBe(32 + ses.throttled);
    const first = ses.emails.find((e) => e.to[0] === "w0-1@example.com")!;
    expect(first.headerMessageId).toBe(`<${runIds[0]}.out.1@localhost>`);
    expect(first.raw).toMatch(/^From: News <news@example\.com>$/im);
  });

  it("waits out TooManyRequests beyond the account's real rate, dropping and repeating nothing", async () => {
    const account = await createTestAccount();
    // The sender claims 60/s; SES allows 6/s and refuses the rest.
    const made = await senderApi(account.token).create(sesSender({ ratePerSecond: 60 }));
    const workflowId = await workflowFor(account, made.body.id, people(20));
    ses.maxSendRate = 6;
    const run = await runToFinish(executor, account.token, workflowId);
    expect(run.status).toBe("SUCCESS");
    expect(run.result).toMatchObject({ emailsSent: 20 });
    expect(ses.throttled).toBeGreaterThan(0);
    expect(ses.emails).toHaveLength(20);
    expect(new Set(ses.emails.map((e) => e.to[0])).size).toBe(20);
  });

  it("marks a MessageRejected email failed and goes on; an unverified from fails the node at once", async () => {
    const account = await createTestAccount();
    const made = await senderApi(account.token).create(sesSender());
    const workflowId = await workflowFor(account, made.body.id, people(3));
    ses.reject("p1@example.com");
    const run = await runToFinish(executor, account.token, workflowId);
    expect(run.status).toBe("SUCCESS");
    expect(run.result).toMatchObject({ emailsSent: 2, failed: 1 });
    const failed = await listEmails(account.token, run.runId, "out", "?status=failed");
    expect(failed.body.items).toEqual([expect.objectContaining({ to: "p1@example.com", error: expect.stringContaining("Amazon SES MessageRejected") })]);

    ses.reset();
    ses.rejectFrom = true;
    const other = await workflowFor(account, made.body.id, people(40, "q"));
    const refused = await runToFinish(executor, account.token, other);
    expect(refused.status).toBe("FAILED");
    expect(refused.error).toContain("Amazon SES refused the sender");
    // At once: no email after those already under way when the refusal came (at most 20 of a sender at once).
    expect(ses.calls).toBeGreaterThanOrEqual(1);
    expect(ses.calls).toBeLessThanOrEqual(20);
    expect(ses.emails).toHaveLength(0);
    expect((await senderApi(account.token).list()).body.items[0].lastError).toContain("not verified");
  });
});
