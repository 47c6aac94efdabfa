/**
 * Fault: the executor process is killed with SIGKILL while an OUTPUT node's SMTP calls are under way (an account's SMTP
 * sender; SMTP has no idempotency key). The local SMTP server answers the first messages and holds the next ones; once
 * calls are held the worker is killed, then the held messages are accepted anyway (the server took them, the dead
 * worker never recorded it). A fresh process takes over: the emails recorded `sending` become `unknown` and are not
 * sent again; no email is delivered twice; the run ends SUCCESS with sent + unknown = every email. Then
 * resend-unknown (a person's explicit choice) delivers exactly those unknown emails, with their original Message-IDs.
 */
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execRows, getDbHandle, openPglite, setDbHandle, type Db } from "@/db/client";
import { resetConfig } from "@/lib/config";
import { resendUnknown } from "@/lib/services/runs/resend-unknown";
import { createSender } from "@/lib/services/senders/create-sender";
import { createTestAccount } from "@/test/support/accounts";
import { startFakeSmtp, type FakeSmtp } from "@/test/support/fake-smtp";
import { enqueue, insertUpload, insertWorkflow } from "@/test/runs/helpers";
import { personGraph } from "@/test/sending/helpers";
import { inWorkerDatabase, startExecutorWorker, withTimeout } from "./executor-worker";
import { waitFor } from "./gate";

const EMAILS = 300;
const ANSWERED = 60;

let smtp: FakeSmtp;
beforeAll(async () => {
  smtp = await startFakeSmtp();
});
afterAll(() => smtp.close());

async function ledger(db: Db, runId: string) {
  const rows = await execRows<{ status: string; to: string; n: number }>(
    db,
    sql`select status, "to", count(*)::int as n from email_sends where run_id = ${runId} group by 1, 2`,
  );
  const byStatus = (s: string) => rows.filter((r) => r.status === s).map((r) => r.to);
  const [run] = await execRows<{ status: string }>(db, sql`select status from runs where id = ${runId}`);
  return { status: run?.status, sent: byStatus("sent"), unknown: byStatus("unknown"), sending: byStatus("sending"), pending: byStatus("pending") };
}

describe("kill -9 of the executor while SMTP calls are under way", () => {
  it("never delivers an email twice: the ones in flight become unknown, and resend-unknown sends exactly those", async () => {
    const { value, workerEnv, openForCheck } = await inWorkerDatabase("flowmail-fault-smtp-", async () => {
      process.env.EMAIL_DAILY_QUOTA = "1000000";
      resetConfig();
      const account = await createTestAccount();
      const sender = await createSender(account.id, {
        kind: "smtp", name: "Fault SMTP", from: "fault@example.com", ratePerSecond: 200,
        smtp: { host: "127.0.0.1", port: smtp.port, secure: false },
      });
      const rows = Array.from({ length: EMAILS }, (_, i) => [`person${i}@example.com`, `P${i}`]);
      const uploadId = await insertUpload(account.id, ["email", "name"], rows, 1000);
      const workflowId = await insertWorkflow(account.id, personGraph(uploadId, { senderId: sender.id }));
      const res = await enqueue(account.token, workflowId);
      expect(res.status).toBe(202);
      return { runId: res.body.runId as string, accountId: account.id };
    });
    const { runId, accountId } = value;
    const startWorker = () => startExecutorWorker("http://127.0.0.1:9", workerEnv);

    smtp.holdAfter(ANSWERED);
    const doomed = startWorker();
    await withTimeout("held SMTP calls", Promise.race([
      waitFor("calls held at the SMTP server", () => smtp.held >= 3, 90_000),
      doomed.exited.then((c) => Promise.reject(new Error(`worker exited: ${c}`))),
    ]), 95_000);
    doomed.child.kill("SIGKILL");
    expect(await doomed.exited).toBe("SIGKILL");
    const held = smtp.held;
    smtp.release(); // accepted although nobody will record them
    smtp.holdAfter(Number.POSITIVE_INFINITY);
    expect(smtp.messages).toHaveLength(ANSWERED + held);

    const restarted = startWorker();
    expect(await withTimeout("the restarted worker to finish", restarted.exited, 120_000)).toBe(0);

    const check = await openForCheck();
    let after: Awaited<ReturnType<typeof ledger>>;
    try {
      after = await ledger(check.db, runId);
    } finally {
      await check.close();
    }
    console.log(`kill-mid-smtp: ${held} call(s) held at the kill, ${after.unknown.length} email(s) became unknown, ${after.sent.length} sent`);
    expect(after.status).toBe("SUCCESS");
    expect(after.sending).toEqual([]);
    expect(after.pending).toEqual([]);
    expect(after.unknown.length).toBeGreaterThanOrEqual(held);
    expect(after.sent.length + after.unknown.length).toBe(EMAILS);
    const delivered = smtp.messages.map((m) => m.to[0]);
    expect(new Set(delivered).size).toBe(delivered.length); // nobody got an email twice
    const unknown = new Set(after.unknown);
    for (const to of after.sent) expect(delivered).toContain(to);
    for (const to of delivered) expect(after.sent.includes(to) || unknown.has(to)).toBe(true);

    // resend-unknown, then a worker runs the new run: exactly the unknown emails go, with their first Message-ID.
    const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
    const original = await getDbHandle();
    const file = onPostgres ? undefined : await openPglite(path.join(workerEnv.DATA_DIR, "pglite"));
    if (file) setDbHandle(file);
    let resendRunId: string;
    try {
      resendRunId = (await resendUnknown(accountId, runId)).runId;
    } finally {
      if (file) {
        await file.close();
        setDbHandle(original);
      }
    }
    const before = smtp.messages.length;
    const third = startWorker();
    expect(await withTimeout("the resend run", third.exited, 120_000)).toBe(0);
    const resent = smtp.messages.slice(before);
    expect(resent.map((m) => m.to[0]).sort()).toEqual([...unknown].sort());
    const firstIds = new Map(smtp.messages.slice(0, before).map((m) => [m.to[0], m.messageId]));
    for (const m of resent) if (firstIds.has(m.to[0])) expect(m.messageId).toBe(firstIds.get(m.to[0]));
    const final = await openForCheck();
    try {
      const end = await ledger(final.db, runId);
      expect(end.sent).toHaveLength(EMAILS);
      expect(end.unknown).toEqual([]);
      const [r] = await execRows<{ status: string }>(final.db, sql`select status from runs where id = ${resendRunId}`);
      expect(r.status).toBe("SUCCESS");
    } finally {
      await final.close();
    }
  });
});
