import { and, eq, gte, lt, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execRows, getDb } from "@/db/client";
import { emailSends, runs } from "@/db/schema";
import { EmbeddedExecutor, inlineStep } from "@/lib/engine/drivers/embedded-executor";
import type { Step } from "@/lib/engine/core/execute-run";
import { createTestAccount } from "@/test/support/accounts";
import { clearResendTransport, startFakeResend, useResendTransport, type FakeResend } from "@/test/support/fake-resend";
import { emailEveryRowGraph, enqueue, getRun, insertUpload, insertWorkflow } from "./helpers";

let resend: FakeResend;

beforeAll(async () => {
  resend = await startFakeResend();
  useResendTransport(resend.url);
});

afterAll(async () => {
  await resend.close();
  clearResendTransport();
});

class SimulatedCrash extends Error {}

/**
 * A step runner that "kills the process" inside batch 1 of the OUTPUT node: the provider has accepted the batch,
 * but the ledger still says pending (the crash came before the ledger update). Batch steps run a few at a time,
 * so the crash waits for its siblings to settle, which makes the state the resume starts from deterministic.
 */
function crashingStep(runIdOf: () => string): Step {
  const inflight = new Set<Promise<unknown>>();
  return {
    async run(id, fn) {
      if (id !== "node:out:batch:1") {
        const p = inlineStep.run(id, fn);
        inflight.add(p);
        return p.finally(() => inflight.delete(p));
      }
      await fn();
      const db = await getDb();
      await db
        .update(emailSends)
        .set({ status: "pending", sentAt: null, providerMessageId: null })
        .where(and(eq(emailSends.runId, runIdOf()), gte(emailSends.itemIndex, 100), lt(emailSends.itemIndex, 200)));
      await Promise.allSettled([...inflight]);
      throw new SimulatedCrash("process killed");
    },
  };
}

describe("a process that stops mid-OUTPUT", () => {
  it("resumes the run from its unfinished nodes: no email twice, none missing", async () => {
    const { id, token } = await createTestAccount();
    const rows = Array.from({ length: 250 }, (_, i) => [`p${i}@example.com`, `P${i}`]);
    const uploadId = await insertUpload(id, ["email", "name"], rows, 100);
    const workflowId = await insertWorkflow(id, emailEveryRowGraph(uploadId, { subject: "Hello {{item.name}}", body: "x" }));
    const { body: enqueued } = await enqueue(token, workflowId);

    const doomed = new EmbeddedExecutor({ getDb, concurrency: 1, sweepIntervalMs: 3_600_000, step: crashingStep(() => enqueued.runId) });
    doomed.poke(workflowId);
    await doomed.idle();
    await doomed.stop();

    const db = await getDb();
    const [stuck] = await db.select().from(runs).where(eq(runs.id, enqueued.runId));
    expect(stuck.status).toBe("RUNNING");
    expect(resend.emails()).toHaveLength(250); // every batch reached the provider; batch 1 was never marked sent
    const [{ pending }] = await execRows<{ pending: number }>(
      db,
      sql`select count(*)::int as pending from email_sends where run_id = ${enqueued.runId} and status = 'pending'`,
    );
    expect(Number(pending)).toBe(100);

    // The restarted process: its first sweep takes over runs whose heartbeat is stale (0 s here).
    const restarted = new EmbeddedExecutor({ getDb, concurrency: 1, sweepIntervalMs: 3_600_000 });
    await restarted.sweep(0);
    await restarted.idle();
    await restarted.stop();

    const run = (await getRun(token, enqueued.runId)).body;
    expect(run.status).toBe("SUCCESS");
    expect(run.result).toEqual({ emailsSent: 250, filteredOut: 0, totalRows: 250, suppressed: 0, duplicates: 0 });
    expect(run.logs.some((l: { message: string }) => l.message === "Run resumed after an interruption")).toBe(true);
    const recipients = resend.emails().map((e) => e.to[0]);
    expect(recipients).toHaveLength(250);
    expect(new Set(recipients)).toEqual(new Set(rows.map((r) => r[0])));
    // Batch 1 was sent again with the same idempotency key, and the provider delivered nothing the second time.
    const batchKeys = resend.requests.filter((r) => r.path === "/emails/batch").map((r) => r.headers["idempotency-key"]);
    expect([...batchKeys].sort()).toEqual([
      `${enqueued.runId}:out:batch:0:100`,
      `${enqueued.runId}:out:batch:1:100`,
      `${enqueued.runId}:out:batch:1:100`,
      `${enqueued.runId}:out:batch:2:50`,
    ]);
    expect(batchKeys[batchKeys.length - 1]).toBe(`${enqueued.runId}:out:batch:1:100`);
  });
});
