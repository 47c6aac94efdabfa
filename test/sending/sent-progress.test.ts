import { and, eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { execRows, getDb } from "@/db/client";
import { emailSends, nodeResults } from "@/db/schema";
import * as ledger from "@/lib/engine/pg/send-ledger";
import { enqueueRun } from "@/lib/engine/pg/enqueue-run";
import type { LedgerEmail } from "@/lib/nodes/ports";
import { createTestAccount } from "@/test/support/accounts";
import { insertUpload, insertWorkflow } from "@/test/runs/helpers";
import { personGraph } from "./helpers";

/**
 * A running OUTPUT node's progress `sent` comes from node_sent_counts (migration 0012), which every statement that marks
 * ledger rows sent adds to in the same transaction, instead of a count of the node's sent rows. It must stay exactly
 * the ledger's count: a batch marked twice (a resumed batch) counts once, and progress never moves back.
 */
describe("a sending node's progress from its sent count", () => {
  it("equals the ledger's sent rows batch after batch, a batch marked twice counted once", async () => {
    const account = await createTestAccount();
    const uploadId = await insertUpload(account.id, ["email", "name"], [["a@example.com", "A"]]);
    const workflowId = await insertWorkflow(account.id, personGraph(uploadId));
    const { run } = await enqueueRun(account.id, workflowId, undefined);
    const db = await getDb();
    const key = { chainRunId: run.runId, nodeId: "out", accountId: account.id };
    await db.insert(nodeResults).values({ runId: run.runId, nodeId: "out", type: "OUTPUT", status: "RUNNING", progress: { sent: 0, total: 250 } });
    const emails: LedgerEmail[] = Array.from({ length: 250 }, (_, i) => ({ itemIndex: i, to: `p${i}@example.com`, subject: "Hi", status: "pending" }));
    await ledger.recordEmails(db, key, emails);
    const batch = (from: number, to: number) => emails.slice(from, to).map((e) => ({ itemIndex: e.itemIndex, providerId: `msg-${e.itemIndex}` }));
    const progress = async () => (await db.select({ p: nodeResults.progress }).from(nodeResults).where(and(eq(nodeResults.runId, run.runId), eq(nodeResults.nodeId, "out"))))[0].p;
    const sentRows = async () =>
      (await db.select({ n: sql<number>`count(*)::int` }).from(emailSends).where(and(eq(emailSends.runId, run.runId), eq(emailSends.status, "sent"))))[0].n;

    expect(await ledger.markSent(db, key, batch(0, 100))).toBe(100);
    await ledger.writeSentProgress(db, key, run.runId);
    expect(await progress()).toEqual({ sent: 100, total: 250 });

    // The same batch again (a resume that finds it delivered): no row changes, nothing is counted.
    expect(await ledger.markSent(db, key, batch(0, 100))).toBe(0);
    expect(await ledger.markSent(db, key, batch(100, 150))).toBe(50);
    await ledger.writeSentProgress(db, key, run.runId);
    expect(await progress()).toEqual({ sent: 150, total: 250 });
    expect(await sentRows()).toBe(150);

    expect(await ledger.markSent(db, key, batch(150, 250))).toBe(100);
    const [summed] = await execRows<{ n: number }>(db, sql`select sum(n)::int as n from node_sent_counts where run_id = ${run.runId} and node_id = 'out'`);
    expect(summed.n).toBe(250);
    expect(await sentRows()).toBe(250);
    await ledger.writeSentProgress(db, key, run.runId);
    expect(await progress()).toEqual({ sent: 250, total: 250 });
    // Progress never moves back: a write whose count is lower than what is shown changes nothing.
    await db.update(nodeResults).set({ progress: { sent: 260, total: 250 } }).where(and(eq(nodeResults.runId, run.runId), eq(nodeResults.nodeId, "out")));
    await ledger.writeSentProgress(db, key, run.runId);
    expect((await progress())?.sent).toBe(260);
  });
});
