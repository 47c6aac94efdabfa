import { and, eq, inArray, sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { execRows, getDb } from "@/db/client";
import { emailSendPacing, emailSends, nodeResults, runs as runsTable, suppressions } from "@/db/schema";
import { resetConfig } from "@/lib/config";
import * as ledger from "@/lib/engine/pg/send-ledger";
import { stopEmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { pgNodePorts } from "@/lib/engine/pg-node-ports";
import { getEmailSender } from "@/lib/email";
import type { EmailSender, OutgoingEmail } from "@/lib/email/types";
import type { LedgerKey, NodePorts, SharedSends } from "@/lib/nodes/ports";
import type { SendContext } from "@/lib/nodes/output/send-with-retry";
import { gathering, resendShared, sendShared, SharedBudgetSpent, type SharedPart } from "@/lib/nodes/output/shared-send";
import { enqueueRun } from "@/lib/engine/pg/enqueue-run";
import { createTestAccount } from "@/test/support/accounts";
import { clearResendTransport, startFakeResend, useResendTransport, type FakeResend } from "@/test/support/fake-resend";
import { emailEveryRowWorkflow, insertUpload, insertWorkflow, startTestExecutor, stopTestExecutor } from "@/test/runs/helpers";
import { personGraph } from "./helpers";

/**
 * Shared provider calls (lib/nodes/output/shared-send.ts, migration 0013): the only batch of small OUTPUT nodes of
 * several runs goes to the provider in one call, and every email still goes out exactly once — also when the call is
 * repeated after a crash, refused, or keeps failing. Driven through the real Resend SDK against the fake Resend.
 */
let resend: FakeResend;
let ports: NodePorts;
let shared: SharedSends;

beforeAll(async () => {
  await stopEmbeddedExecutor();
  resend = await startFakeResend();
  useResendTransport(resend.url);
  ports = pgNodePorts(await getDb());
  shared = ports.ledger.shared!;
});

afterAll(async () => {
  await stopTestExecutor();
  await resend.close();
  clearResendTransport();
});

beforeEach(() => resend.reset());

const context = (overrides: Partial<SendContext> = {}): SendContext => ({
  pacing: ports.pacing,
  ratePerSecond: 1000,
  deadline: Date.now() + 60_000,
  quotaSentence: async (quota) => `the ${quota} quota is used up`,
  budgetSentence: async (last) => `kept failing: ${last}`,
  shouldStop: async () => false,
  ...overrides,
});

/** A run of its own workflow with `n` pending ledger rows on node "out", and the batch that would send them. */
async function pendingBatch(accountId: string, tag: string, n: number): Promise<SharedPart> {
  const uploadId = await insertUpload(accountId, ["email", "name"], [["a@example.com", "A"]]);
  const workflowId = await insertWorkflow(accountId, personGraph(uploadId));
  const { run } = await enqueueRun(accountId, workflowId, undefined);
  const key: LedgerKey = { chainRunId: run.runId, nodeId: "out", accountId };
  const emails: OutgoingEmail[] = Array.from({ length: n }, (_, i) => ({
    to: `${tag}-${i}@example.com`,
    subject: `Hi ${tag} ${i}`,
    text: `Hello ${tag} ${i}`,
    kind: "workflow",
    headers: { "List-Unsubscribe": `<https://flowmail.test/u/${tag}-${i}>`, "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" },
    idempotencyKey: `${run.runId}:out:${i}`,
  }));
  await ledger.recordEmails(await getDb(), key, emails.map((e, i) => ({ itemIndex: i, to: e.to, subject: e.subject, status: "pending" })));
  return { ledger: { ...ports.ledger, shared }, pacing: ports.pacing, key, emails, itemIndexes: emails.map((_, i) => i), ctx: context() };
}

async function rowsOf(part: SharedPart) {
  const db = await getDb();
  return db
    .select({ item: emailSends.itemIndex, status: emailSends.status, sendKey: emailSends.sendKey, providerId: emailSends.providerMessageId })
    .from(emailSends)
    .where(and(eq(emailSends.runId, part.key.chainRunId), eq(emailSends.nodeId, "out")))
    .orderBy(emailSends.itemIndex);
}

const batchCalls = () => resend.requests.filter((r) => r.path === "/emails/batch");

describe("shared provider calls", () => {
  it("batches ready in the same turn go in one call under one key, their rows claimed first", async () => {
    const account = await createTestAccount();
    const parts = [await pendingBatch(account.id, "a", 2), await pendingBatch(account.id, "b", 3), await pendingBatch(account.id, "c", 1)];
    const outcomes = await Promise.all(parts.map((p) => sendShared(getEmailSender(), p)));

    expect(batchCalls()).toHaveLength(1);
    const [call] = batchCalls();
    expect(call.headers["idempotency-key"]).toMatch(/^shared:/);
    expect((call.body as { to: string }[]).map((e) => e.to)).toEqual(["a-0@example.com", "a-1@example.com", "b-0@example.com", "b-1@example.com", "b-2@example.com", "c-0@example.com"]);
    expect(resend.emails()).toHaveLength(6);
    for (const [k, part] of parts.entries()) {
      const outcome = outcomes[k];
      expect(outcome.kind).toBe("shared");
      if (outcome.kind !== "shared") continue;
      expect(outcome.missing).toEqual([]);
      const delivered = part.emails.map((e) => resend.emailsTo(e.to)[0].id);
      expect(part.itemIndexes.map((i) => outcome.ids.get(i))).toEqual(delivered);
      // Claimed before the call (every row carries the call's key), and marked sent after it with its provider id.
      expect((await rowsOf(part)).map((r) => [r.status, r.sendKey, r.providerId])).toEqual(delivered.map((id) => ["sent", call.headers["idempotency-key"], id]));
    }
  });

  it("one statement after the call marks every run's rows sent and answers each run's node counts, its progress written", async () => {
    const account = await createTestAccount();
    const parts = [await pendingBatch(account.id, "m1", 2), await pendingBatch(account.id, "m2", 1)];
    const db = await getDb();
    // m1's node has a third row, a duplicate: counted, never sent.
    await ledger.recordEmails(db, parts[0].key, [{ itemIndex: 2, to: "m1-0@example.com", subject: "s", status: "duplicate" }]);
    for (const part of parts) {
      part.execRunId = part.key.chainRunId;
      await db.insert(nodeResults).values({ runId: part.key.chainRunId, nodeId: "out", type: "OUTPUT", status: "RUNNING" });
    }
    let statements = 0;
    const counting: SharedSends = { ...shared, markSentAndCount: (...args) => (statements++, shared.markSentAndCount(...args)) };
    for (const part of parts) part.ledger = { ...part.ledger, shared: counting };
    const outcomes = await Promise.all(parts.map((p) => sendShared(getEmailSender(), p)));
    expect(statements).toBe(1);
    expect(outcomes.map((o) => (o.kind === "shared" ? o.counts : undefined))).toEqual([
      { pending: 0, sent: 2, suppressed: 0, duplicate: 1, failed: 0, preview: 0, sending: 0, unknown: 0 },
      { pending: 0, sent: 1, suppressed: 0, duplicate: 0, failed: 0, preview: 0, sending: 0, unknown: 0 },
    ]);
    const progress = await db.select({ runId: nodeResults.runId, progress: nodeResults.progress }).from(nodeResults).where(and(inArray(nodeResults.runId, parts.map((p) => p.key.chainRunId)), eq(nodeResults.nodeId, "out")));
    expect(new Map(progress.map((p) => [p.runId, p.progress]))).toEqual(new Map([[parts[0].key.chainRunId, { sent: 2, total: 2 }], [parts[1].key.chainRunId, { sent: 1, total: 1 }]]));
  });

  /** The real sender, whose provider calls wait at a gate until the test opens it; `calls`: each call's recipients. */
  function gatedSender() {
    const real = getEmailSender();
    const calls: string[][] = [];
    const gates: (() => void)[] = [];
    const gate = (emails: OutgoingEmail[]) => {
      calls.push(emails.map((e) => e.to));
      return new Promise<void>((open) => gates.push(open));
    };
    const sender: EmailSender = {
      ...real,
      sendBatch: async (emails, key) => (await gate(emails), real.sendBatch(emails, key)),
      sendBatchDetailed: real.sendBatchDetailed ? async (emails, key) => (await gate(emails), real.sendBatchDetailed!(emails, key)) : undefined,
    };
    return { sender, calls, open: (k: number) => gates[k]() };
  }
  const until = async (check: () => boolean) => {
    for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(check()).toBe(true);
  };
  const nextTurn = () => new Promise((r) => setImmediate(r));
  /** Six one-email batches tagged `${prefix}a`…`${prefix}f`; the first four made two calls, both held at their gate. */
  async function twoCallsHeld(prefix: string) {
    const account = await createTestAccount();
    const parts = await Promise.all(["a", "b", "c", "d", "e", "f"].map((t) => pendingBatch(account.id, `${prefix}${t}`, 1)));
    const gated = gatedSender();
    // Fewer than two calls under way: each call launches at the end of its turn.
    const a = [sendShared(gated.sender, parts[0]), sendShared(gated.sender, parts[1])];
    await until(() => gated.calls.length === 1);
    const b = [sendShared(gated.sender, parts[2]), sendShared(gated.sender, parts[3])];
    await until(() => gated.calls.length === 2);
    return { ...gated, parts, a, b };
  }

  it("while two calls are in flight, batches of later turns gather into one call, launched when a call ends", async () => {
    const saved = { ...gathering };
    gathering.maxWaitMs = 60_000; // here only a call's end launches the gathering call
    try {
      const { sender, calls, open, parts, a, b } = await twoCallsHeld("g");
      // Two in flight: ge and gf, a turn apart, wait together for one of them to end.
      const c = [sendShared(sender, parts[4])];
      await nextTurn();
      c.push(sendShared(sender, parts[5]));
      await new Promise((r) => setTimeout(r, 150));
      expect(calls).toHaveLength(2);
      open(1);
      await Promise.all(b);
      await until(() => calls.length === 3);
      expect(calls).toEqual([["ga-0@example.com", "gb-0@example.com"], ["gc-0@example.com", "gd-0@example.com"], ["ge-0@example.com", "gf-0@example.com"]]);
      open(0);
      open(2);
      const outcomes = await Promise.all([...a, ...c]);
      expect(outcomes.map((o) => o.kind)).toEqual(["shared", "shared", "shared", "shared"]);
      expect(resend.emails()).toHaveLength(6);
    } finally {
      Object.assign(gathering, saved);
    }
  });

  it("a gathering call waits for a call in flight at most maxWaitMs", async () => {
    const { sender, calls, open, parts, a, b } = await twoCallsHeld("w");
    const c = [sendShared(sender, parts[4]), sendShared(sender, parts[5])];
    // Neither call in flight ends, yet the third goes once it has waited gathering.maxWaitMs (20 ms).
    await until(() => calls.length === 3);
    expect(calls[2]).toEqual(["we-0@example.com", "wf-0@example.com"]);
    [0, 1, 2].forEach(open);
    expect((await Promise.all([...a, ...b, ...c])).every((o) => o.kind === "shared")).toBe(true);
  });

  it("a batch alone in its turn is its own call (nothing claimed)", async () => {
    const account = await createTestAccount();
    const part = await pendingBatch(account.id, "solo", 2);
    expect(await sendShared(getEmailSender(), part)).toEqual({ kind: "alone", slotTaken: true });
    expect(batchCalls()).toHaveLength(0);
    expect((await rowsOf(part)).every((r) => r.sendKey === null)).toBe(true);
  });

  it("after a crash between the call and the marking, a resume sends the same call again: nothing is delivered twice", async () => {
    const account = await createTestAccount();
    const parts = [await pendingBatch(account.id, "r1", 2), await pendingBatch(account.id, "r2", 2)];
    // The process dies right after the call, before the statement that marks its rows sent.
    const crash: SharedSends = { ...shared, markSentAndCount: () => Promise.reject(new Error("killed")) };
    for (const part of parts) part.ledger = { ...part.ledger, shared: crash };
    const settled = await Promise.allSettled(parts.map((p) => sendShared(getEmailSender(), p)));
    expect(settled.map((s) => s.status)).toEqual(["rejected", "rejected"]);
    // The provider has the call, the rows are still pending under its key.
    const sendKey = batchCalls()[0].headers["idempotency-key"];
    const db = await getDb();
    // An unsubscribe meanwhile does not take a row out of the call (it may have been delivered already).
    await db.insert(suppressions).values({ accountId: account.id, email: "r1-1@example.com", reason: "manual" });
    const pending = await ports.ledger.pendingInRange(parts[0].key, parts[0].key.chainRunId, 0, 100);
    expect(pending.indexes).toEqual([]);
    expect(pending.inflight).toEqual([sendKey]);

    await resendShared(getEmailSender(), shared, sendKey, context());
    expect(batchCalls()).toHaveLength(2);
    expect(batchCalls()[1].headers["idempotency-key"]).toBe(sendKey);
    expect(batchCalls()[1].status).toBe(200); // the very same body: answered from the provider's idempotency cache
    expect(resend.emails()).toHaveLength(4);
    for (const part of parts) {
      const rows = await rowsOf(part);
      expect(rows.map((r) => r.status)).toEqual(["sent", "sent"]);
      expect(rows.map((r) => r.providerId)).toEqual(part.emails.map((e) => resend.emailsTo(e.to)[0].id));
    }
    // The other run's resume finds its rows sent: no call.
    await resendShared(getEmailSender(), shared, sendKey, context());
    expect(batchCalls()).toHaveLength(2);
    expect((await ports.ledger.pendingInRange(parts[1].key, parts[1].key.chainRunId, 0, 100)).inflight).toBeUndefined();
    await db.delete(suppressions).where(eq(suppressions.accountId, account.id));
  });

  it("a refused call is released: each run sends its own emails alone", async () => {
    const account = await createTestAccount();
    const parts = [await pendingBatch(account.id, "x1", 1), await pendingBatch(account.id, "x2", 1)];
    resend.failNext(1, 422);
    const outcomes = await Promise.all(parts.map((p) => sendShared(getEmailSender(), p)));
    expect(outcomes).toEqual([
      { kind: "alone", slotTaken: false },
      { kind: "alone", slotTaken: false },
    ]);
    expect(resend.emails()).toHaveLength(0);
    for (const part of parts) expect((await rowsOf(part)).map((r) => [r.status, r.sendKey])).toEqual([["pending", null]]);
  });

  it("a call refused after an attempt whose fate is unknown is not released: its runs fail, its rows keep the key", async () => {
    const account = await createTestAccount();
    const parts = [await pendingBatch(account.id, "z1", 1), await pendingBatch(account.id, "z2", 1)];
    resend.failNext(1, 503);
    resend.failNext(1, 422);
    const settled = await Promise.allSettled(parts.map((p) => sendShared(getEmailSender(), p)));
    for (const s of settled) {
      expect(s.status).toBe("rejected");
      expect(String((s as PromiseRejectedResult).reason)).toMatch(/refused/);
    }
    expect(batchCalls().map((r) => r.status)).toEqual([503, 422]);
    const keys = new Set<string | null>();
    for (const part of parts) for (const row of await rowsOf(part)) keys.add(row.sendKey);
    expect([...keys]).toEqual([batchCalls()[0].headers["idempotency-key"]]);
  });

  it("a call whose send budget runs out fails every run in it, and its rows keep the key for a retry", async () => {
    const account = await createTestAccount();
    const parts = [await pendingBatch(account.id, "y1", 1), await pendingBatch(account.id, "y2", 1)];
    for (const part of parts) part.ctx = context({ deadline: Date.now() });
    resend.failNext(5, 503);
    const settled = await Promise.allSettled(parts.map((p) => sendShared(getEmailSender(), p)));
    for (const s of settled) {
      expect(s.status).toBe("rejected");
      expect((s as PromiseRejectedResult).reason).toBeInstanceOf(SharedBudgetSpent);
    }
    const keys = new Set<string | null>();
    for (const part of parts) for (const row of await rowsOf(part)) keys.add(row.sendKey);
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^shared:/);
  });

  it("only a first attempt may share: recordAndBegin calls the first batch fresh only when it inserted every row of it", async () => {
    const account = await createTestAccount();
    const uploadId = await insertUpload(account.id, ["email", "name"], [["a@example.com", "A"]]);
    const workflowId = await insertWorkflow(account.id, personGraph(uploadId));
    const { run } = await enqueueRun(account.id, workflowId, undefined);
    const key: LedgerKey = { chainRunId: run.runId, nodeId: "out", accountId: account.id };
    const emails = [0, 1].map((i) => ({ itemIndex: i, to: `f${i}@example.com`, subject: "s", status: "pending" as const }));
    const begin = () => ports.ledger.recordAndBegin!(key, run.runId, emails, { firstTo: 2, quota: 1000 });
    expect((await begin()).first).toMatchObject({ indexes: [0, 1], fresh: true });
    // A resume (the batch may have been sent alone under its own key before the crash): not fresh, so it goes alone.
    expect((await begin()).first).toMatchObject({ indexes: [0, 1], fresh: false });
  });

  it("small runs executed side by side finish with every email sent once and their counts right", async () => {
    const account = await createTestAccount();
    const workflows = await Promise.all(Array.from({ length: 6 }, (_, w) => emailEveryRowWorkflow(account.id, 3, `side${w}`)));
    const executor = startTestExecutor(8);
    const runIds: string[] = [];
    for (const { workflowId } of workflows) runIds.push((await enqueueRun(account.id, workflowId, undefined)).run.runId);
    await executor.idle();
    await stopTestExecutor();
    const db = await getDb();
    const rows = await db.select({ status: emailSends.status, to: emailSends.to }).from(emailSends).where(inArray(emailSends.runId, runIds));
    expect(rows).toHaveLength(18);
    expect(rows.every((r) => r.status === "sent")).toBe(true);
    for (const row of rows) expect(resend.emailsTo(row.to)).toHaveLength(1);
    // (The executor also runs the earlier tests' runs, whose workflows write to other addresses.)
    expect(resend.emails().filter((e) => e.to[0].startsWith("side"))).toHaveLength(18);
    const outputs = await db.select({ output: nodeResults.output, progress: nodeResults.progress }).from(nodeResults).where(and(inArray(nodeResults.runId, runIds), eq(nodeResults.nodeId, "out")));
    expect(outputs.map((o) => [(o.output as { emailsSent: number }).emailsSent, o.progress])).toEqual(runIds.map(() => [3, { sent: 3, total: 3 }]));
    const runs = await db.select({ status: runsTable.status }).from(runsTable).where(inArray(runsTable.id, runIds));
    expect(runs.map((r) => r.status)).toEqual(runIds.map(() => "SUCCESS"));
  });

  it("a shared call takes one send slot of the provider's limit, not one per run in it", async () => {
    process.env.EMAIL_RATE_PER_SECOND = "2";
    resetConfig();
    const db = await getDb();
    // Every slot the limiter hands out (a new row, or a row whose slot moved on; a provider's rate-limit answer moves
    // only next_at), counted by the database itself instead of timed.
    await db.execute(sql.raw(`create table test_pacing_slots (key text not null, slot_at timestamptz not null)`));
    await db.execute(sql.raw(`create function test_count_pacing_slot() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' or new.slot_at is distinct from old.slot_at then
          insert into test_pacing_slots (key, slot_at) values (new.key, new.slot_at);
        end if;
        return new;
      end $$`));
    await db.execute(sql.raw(`create trigger test_count_pacing_slot after insert or update on email_send_pacing
      for each row execute function test_count_pacing_slot()`));
    try {
      const account = await createTestAccount();
      const workflows = await Promise.all(Array.from({ length: 6 }, (_, w) => emailEveryRowWorkflow(account.id, 1, `slot${w}-`)));
      const pacingKey = getEmailSender().pacingKey!;
      await db.delete(emailSendPacing).where(eq(emailSendPacing.key, pacingKey));
      await db.execute(sql`delete from test_pacing_slots`);
      const executor = startTestExecutor(8);
      const runIds: string[] = [];
      for (const { workflowId } of workflows) runIds.push((await enqueueRun(account.id, workflowId, undefined)).run.runId);
      await executor.idle();
      await stopTestExecutor();
      const runs = await db.select({ status: runsTable.status }).from(runsTable).where(inArray(runsTable.id, runIds));
      expect(runs.map((r) => r.status)).toEqual(runIds.map(() => "SUCCESS"));
      expect(resend.emails().filter((e) => e.to[0].startsWith("slot"))).toHaveLength(6);
      // The runs shared calls (the first call's slot was taken at once; the others' batches joined the next call while
      // it waited for its slot), and the limiter handed out one slot per call, not one per run.
      const calls = resend.requests.length;
      expect(calls).toBeLessThan(6);
      const slots = await execRows<{ n: number }>(db, sql`select count(*)::int as n from test_pacing_slots where key = ${pacingKey}`);
      expect(Number(slots[0].n)).toBe(calls);
    } finally {
      await db.execute(sql.raw(`drop trigger if exists test_count_pacing_slot on email_send_pacing`));
      await db.execute(sql.raw(`drop function if exists test_count_pacing_slot()`));
      await db.execute(sql.raw(`drop table if exists test_pacing_slots`));
      delete process.env.EMAIL_RATE_PER_SECOND;
      resetConfig();
    }
  });
});
