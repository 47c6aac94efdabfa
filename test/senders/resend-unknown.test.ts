// POST /api/workflows/runs/:runId/resend-unknown: a new live run in the source's chain that sends exactly the emails
// of unknown fate (same idempotency key, so the same Message-ID), leaves sent and refused ones alone; 409 when there is
// nothing to resend or it was resent already; another account's run 404. (The crash that makes emails unknown is
// test/faults/kill-mid-smtp.test.ts; here two rows are set unknown by hand.)
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { getDb } from "@/db/client";
import { POST as resendHandler } from "@/app/api/workflows/runs/[runId]/resend-unknown/route";
import type { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { createTestAccount } from "@/test/support/accounts";
import { startFakeSmtp, type FakeSmtp } from "@/test/support/fake-smtp";
import { call } from "@/test/support/http";
import { insertUpload, insertWorkflow, startTestExecutor, stopTestExecutor } from "@/test/runs/helpers";
import { listEmails, personGraph } from "@/test/sending/helpers";
import { finished, runToFinish, senderApi, smtpSender } from "./helpers";

let smtp: FakeSmtp;
let executor: EmbeddedExecutor;
beforeAll(async () => {
  smtp = await startFakeSmtp();
  executor = startTestExecutor(2);
});
afterAll(async () => {
  await stopTestExecutor();
  await smtp.close();
});

const resend = (token: string, runId: string) =>
  call(resendHandler, { method: "POST", path: `/api/workflows/runs/${runId}/resend-unknown`, token, params: { runId } });

describe("resend-unknown", () => {
  it("sends exactly the unknown emails again, once, with their Message-ID", async () => {
    const account = await createTestAccount();
    const made = await senderApi(account.token).create(smtpSender(smtp.port, { ratePerSecond: 100 }));
    const rows = Array.from({ length: 5 }, (_, i) => [`u${i}@example.com`, `U${i}`]);
    const uploadId = await insertUpload(account.id, ["email", "name"], rows);
    const workflowId = await insertWorkflow(account.id, personGraph(uploadId, { senderId: made.body.id }));
    smtp.refuse("u4@example.com");
    const run = await runToFinish(executor, account.token, workflowId);
    expect(run.result).toMatchObject({ emailsSent: 4, failed: 1 });
    expect((await resend(account.token, run.runId)).status).toBe(409); // nothing unknown yet

    // As a resumed node leaves them: two emails whose call was under way when the process died.
    await (await getDb()).execute(sql`update email_sends set status = 'unknown' where run_id = ${run.runId} and item_index in (1, 3)`);
    const unknownPage = await listEmails(account.token, run.runId, "out", "?status=unknown");
    expect(unknownPage.body.items.map((e: { to: string }) => e.to)).toEqual(["u1@example.com", "u3@example.com"]);
    const before = smtp.messages.length;
    const other = await createTestAccount();
    expect((await resend(other.token, run.runId)).status).toBe(404);

    const res = await resend(account.token, run.runId);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ workflowId, status: "PENDING", resendOf: run.runId });
    expect(res.headers.get("location")).toBe(`/api/workflows/runs/${res.body.runId}`);
    const again = await finished(executor, account.token, res.body.runId);
    expect(again.status).toBe("SUCCESS");
    expect(again.resendOf).toBe(run.runId);
    const resent = smtp.messages.slice(before);
    expect(resent.map((m) => m.to[0]).sort()).toEqual(["u1@example.com", "u3@example.com"]);
    expect(resent.find((m) => m.to[0] === "u1@example.com")!.messageId).toBe(`<${run.runId}.out.1@localhost>`);
    const page = await listEmails(account.token, run.runId, "out");
    expect(page.body.counts).toMatchObject({ sent: 4, failed: 1, unknown: 0 });
    expect((await resend(account.token, run.runId)).status).toBe(409);
    smtp.reset();
  });

  it("refuses (409) a run whose other nodes failed: only a retry runs them again", async () => {
    const account = await createTestAccount();
    const made = await senderApi(account.token).create(smtpSender(smtp.port, { ratePerSecond: 100 }));
    const uploadId = await insertUpload(account.id, ["email", "name"], [["v0@example.com", "V0"], ["v1@example.com", "V1"]]);
    const workflowId = await insertWorkflow(account.id, personGraph(uploadId, { senderId: made.body.id }));
    const run = await runToFinish(executor, account.token, workflowId);
    expect(run.status).toBe("SUCCESS");
    // As a run leaves them when one email's call was cut off and another node then failed for good.
    const db = await getDb();
    await db.execute(sql`update email_sends set status = 'unknown' where run_id = ${run.runId} and item_index = 0`);
    await db.execute(sql`update node_results set status = 'FAILED' where run_id = ${run.runId} and node_id = 'src'`);
    await db.execute(sql`update runs set status = 'FAILED' where id = ${run.runId}`);
    const before = smtp.messages.length;
    const res = await resend(account.token, run.runId);
    expect(res.status).toBe(409);
    expect(res.body.detail).toBe('Node "src" of this run failed: retry the run first; resending sends only the emails of unknown fate.');
    expect(smtp.messages.length).toBe(before);
  });
});
