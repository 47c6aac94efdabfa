import { and, eq, sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { getDb, getRunStateDb } from "@/db/client";
import { emailSends, nodeResults, runs, suppressions, workflows } from "@/db/schema";
import { resetConfig } from "@/lib/config";
import { inlineStep } from "@/lib/engine/drivers/embedded-executor";
import { executeRun, type EngineDeps } from "@/lib/engine/core/execute-run";
import { pgEngineDeps } from "@/lib/engine/pg-engine";
import { pgNodePorts } from "@/lib/engine/pg-node-ports";
import { PgRunStore } from "@/lib/engine/pg/pg-run-store";
import { newId } from "@/lib/ids";
import { ledgerChunk } from "@/lib/engine/pg-node-ports";
import type { NodePorts } from "@/lib/nodes/ports";
import { createTestAccount } from "@/test/support/accounts";
import { emailEveryRowWorkflow, fakeResendForRuns, type TestGraph } from "@/test/runs/helpers";

/**
 * OUTPUT with more emails than one ledger statement records (1,000): it records the first 1,000, then sends its
 * first batches while the rest are recorded, when the daily quota surely allows every email (the first
 * email of 40,000 no longer waits for all their ledger rows). Here the later rows are held back until the provider
 * has been called, so the test sees the overlap rather than timing it; the quota paths, a provider refusal and a
 * crash in the middle show that nothing is sent twice, nothing is left pending and nothing over the quota leaves.
 */
const fake = fakeResendForRuns();

afterEach(() => {
  delete process.env.EMAIL_DAILY_QUOTA;
  resetConfig();
});

type Gate = { calls: number; heldAt: number[]; sentBeforeTail: number | null; progressWhileHeld?: unknown };

/**
 * The node ports with the ledger's later parts (`reopen: false`) gated: each waits until the fake Resend has had a
 * call (or `holdMs`, which the test then sees in `heldAt`), and `onTail` may throw in place of recording.
 */
function gatedPorts(db: Awaited<ReturnType<typeof getDb>>, gate: Gate, onTail?: (part: number) => void, holdMs = 10_000): NodePorts {
  const ports = pgNodePorts(db, { inline: true });
  const requests = () => fake.resend.requests.filter((r) => r.path.startsWith("/emails")).length;
  const baseline = requests();
  return {
    ...ports,
    ledger: {
      ...ports.ledger,
      async recordEmails(key, emails, options) {
        if (options?.reopen !== false) return ports.ledger.recordEmails(key, emails, options);
        const part = gate.calls++;
        const until = Date.now() + holdMs;
        while (requests() === baseline && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 5));
        gate.heldAt.push(requests() - baseline);
        gate.progressWhileHeld ??= await progress(key.chainRunId);
        onTail?.(part);
        await ports.ledger.recordEmails(key, emails, options);
        gate.sentBeforeTail ??= requests() - baseline;
      },
    },
  };
}

async function deps(ports?: NodePorts): Promise<EngineDeps> {
  const db = await getDb();
  return { ...pgEngineDeps(db, async () => {}), ports: ports ?? pgNodePorts(db, { inline: true }), store: new PgRunStore(await getRunStateDb(), { inline: true }) };
}

async function newRun(count: number) {
  const { id } = await createTestAccount();
  const prefix = `stream-${Date.now()}-${Math.random().toString(36).slice(2, 8)}-`;
  const { workflowId, addresses } = await emailEveryRowWorkflow(id, count, prefix);
  const db = await getDb();
  const [workflow] = await db.select().from(workflows).where(eq(workflows.id, workflowId));
  const runId = newId("run");
  await db.insert(runs).values({ id: runId, workflowId, accountId: id, workflowVersion: 1, graph: workflow.graph as TestGraph });
  return { accountId: id, workflowId, runId, addresses, prefix };
}

async function ledgerCounts(runId: string): Promise<Record<string, number>> {
  const rows = await (await getDb())
    .select({ status: emailSends.status, n: sql<number>`count(*)::int` })
    .from(emailSends)
    .where(eq(emailSends.runId, runId))
    .groupBy(emailSends.status);
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

const delivered = (prefix: string) => fake.resend.emails().flatMap((e) => e.to).filter((to) => to.startsWith(prefix));
const progress = async (runId: string) =>
  (await (await getDb()).select().from(nodeResults).where(and(eq(nodeResults.runId, runId), eq(nodeResults.nodeId, "out"))))[0].progress;
const runRow = async (runId: string) => (await (await getDb()).select().from(runs).where(eq(runs.id, runId)))[0];

/** The run SUCCESS with every address emailed exactly once, each ledger row sent, the progress complete. */
async function expectAllSentOnce(runId: string, prefix: string, addresses: string[]): Promise<void> {
  const run = await runRow(runId);
  expect(run.status).toBe("SUCCESS");
  expect(run.result).toMatchObject({ emailsSent: addresses.length });
  const got = delivered(prefix);
  expect(got).toHaveLength(addresses.length);
  expect(new Set(got)).toEqual(new Set(addresses));
  expect(await ledgerCounts(runId)).toEqual({ sent: addresses.length });
  expect(await progress(runId)).toEqual({ sent: addresses.length, total: addresses.length });
}

describe("OUTPUT sends its first batches while the rest of its ledger rows are recorded", () => {
  it("sends the first batch before the later rows are written, and every email exactly once", async () => {
    const { workflowId, runId, addresses, prefix } = await newRun(2_500);
    const gate: Gate = { calls: 0, heldAt: [], sentBeforeTail: null };
    const store = new PgRunStore(await getRunStateDb(), { inline: true });
    const claimed = await store.claimNext(workflowId);
    await executeRun(inlineStep, { ...(await deps(gatedPorts(await getDb(), gate))), store }, runId, claimed!);

    // Every later part (after the first batch's 100 rows, ledgerChunk() rows per statement: 1,000 on PostgreSQL, 500
    // on PGlite), each held until a call had reached the provider.
    expect(gate.calls).toBe(Math.ceil((2_500 - 100) / ledgerChunk()));
    expect(gate.calls).toBeGreaterThanOrEqual(2);
    expect(gate.heldAt.every((n) => n >= 1)).toBe(true);
    // Before its rows are all in, the node's progress counts every rendered email as its total.
    expect(gate.progressWhileHeld).toMatchObject({ total: 2_500 });
    await expectAllSentOnce(runId, prefix, addresses);
  });

  it("records every row before the first email when the quota might not allow them all, and then sends within it", async () => {
    const { accountId, workflowId, runId, addresses, prefix } = await newRun(1_500);
    // 200 suppressed: 1,300 to send. A quota of 1,400 is below the 1,500 rendered, above the 1,300 that count.
    await (await getDb()).insert(suppressions).values(addresses.slice(0, 200).map((email) => ({ accountId, email, reason: "manual" as const })));
    process.env.EMAIL_DAILY_QUOTA = "1400";
    resetConfig();
    const gate: Gate = { calls: 0, heldAt: [], sentBeforeTail: null };
    const store = new PgRunStore(await getRunStateDb(), { inline: true });
    const claimed = await store.claimNext(workflowId);
    // Held for a second: a node that sent before its rows were all in would have called the provider within milliseconds.
    await executeRun(inlineStep, { ...(await deps(gatedPorts(await getDb(), gate, undefined, 1_000))), store }, runId, claimed!);

    expect(gate.calls).toBe(1);
    expect(gate.sentBeforeTail).toBe(0); // held its second without a call: nothing was sent before every row was there
    expect((await runRow(runId)).status).toBe("SUCCESS");
    expect(new Set(delivered(prefix))).toEqual(new Set(addresses.slice(200)));
    expect(delivered(prefix)).toHaveLength(1_300);
    expect(await ledgerCounts(runId)).toEqual({ sent: 1_300, suppressed: 200 });
    expect(await progress(runId)).toEqual({ sent: 1_300, total: 1_300 });
  });

  it("refuses every email when the exact count is over the quota, and leaves none pending", async () => {
    const { workflowId, runId, prefix } = await newRun(1_500);
    process.env.EMAIL_DAILY_QUOTA = "1499";
    resetConfig();
    const store = new PgRunStore(await getRunStateDb(), { inline: true });
    const claimed = await store.claimNext(workflowId);
    await executeRun(inlineStep, { ...(await deps()), store }, runId, claimed!);

    const run = await runRow(runId);
    expect(run.status).toBe("FAILED");
    expect(run.error).toMatch(/daily email quota \(EMAIL_DAILY_QUOTA, 1,499\) is used up: .* this node has 1,500 to send, so none of them was sent/);
    expect(delivered(prefix)).toHaveLength(0);
    expect(await ledgerCounts(runId)).toEqual({ failed: 1_500 });
  });

  it("a provider refusal while the rest is recorded fails the node with every unsent row failed, none pending", async () => {
    const { workflowId, runId, prefix } = await newRun(2_500);
    const gate: Gate = { calls: 0, heldAt: [], sentBeforeTail: null };
    fake.resend.failNext(1, 422);
    const store = new PgRunStore(await getRunStateDb(), { inline: true });
    const claimed = await store.claimNext(workflowId);
    await executeRun(inlineStep, { ...(await deps(gatedPorts(await getDb(), gate))), store }, runId, claimed!);

    const run = await runRow(runId);
    expect(run.status).toBe("FAILED");
    expect(run.error).toMatch(/The email provider refused the emails/);
    expect(delivered(prefix)).toHaveLength(0);
    const counts = await ledgerCounts(runId);
    expect(counts.pending).toBeUndefined();
    expect(counts.sent).toBeUndefined();
    // The first part and whatever later part was recorded before the recorders stopped: all failed.
    expect(counts.failed).toBeGreaterThanOrEqual(1_000);
  });

  it("a crash while the rest is recorded: the resumed run records what is missing and sends nothing twice", async () => {
    const { workflowId, runId, addresses, prefix } = await newRun(2_500);
    const gate: Gate = { calls: 0, heldAt: [], sentBeforeTail: null };
    const crashing = new PgRunStore(await getRunStateDb(), { inline: true });
    const claimed = await crashing.claimNext(workflowId);
    const killed = gatedPorts(await getDb(), gate, (part) => {
      // As a lost database connection: not the node's fault, so the step fails and the run stays RUNNING.
      if (part === 1) throw Object.assign(new Error("process killed"), { code: "CONNECTION_DESTROYED" });
    });
    await expect(executeRun(inlineStep, { ...(await deps(killed)), store: crashing }, runId, claimed!)).rejects.toThrow("process killed");
    crashing.abandon(runId);
    const before = delivered(prefix).length;
    expect(before).toBeGreaterThanOrEqual(100);
    expect(before).toBeLessThan(2_500);

    // Another process resumes it (the sweep's takeover).
    await executeRun(inlineStep, await deps(), runId);
    await expectAllSentOnce(runId, prefix, addresses);
  });
});
