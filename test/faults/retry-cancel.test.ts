/**
 * Run control under load (CONTRACT 12), through the real route handlers and the embedded executor:
 *  1. The provider answers 400 after 1,200 of 3,000 emails: the run is FAILED. The provider is fixed, the run retried:
 *     SUCCESS, 3,000 distinct emails in all, none twice; the reused nodes did not execute again (their startedAt is
 *     the failed run's).
 *  2. A RUNNING 20,000-email run is cancelled: stopped within 5 s, FAILED "Cancelled", no email of it after the stop,
 *     and the workflow's next run starts at once.
 * Prints the figures. Runs on PGlite and on PostgreSQL (TEST_DATABASE_URL).
 */
import { sql } from "drizzle-orm";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as cancelHandler } from "@/app/api/workflows/runs/[runId]/cancel/route";
import { POST as retryHandler } from "@/app/api/workflows/runs/[runId]/retry/route";
import { execRows, getDb } from "@/db/client";
import { resetConfig } from "@/lib/config";
import { createTestAccount } from "@/test/support/accounts";
import { clearResendTransport, startFakeResend, type FakeResend, useResendTransport } from "@/test/support/fake-resend";
import { call } from "@/test/support/http";
import { emailEveryRowGraph, emailEveryRowWorkflow, enqueue, getRun, insertUpload, startTestExecutor, stopTestExecutor } from "@/test/runs/helpers";
import { startGate, waitFor, type Gate } from "./gate";

let resend: FakeResend;
let gate: Gate;

beforeAll(async () => {
  process.env.EMAIL_DAILY_QUOTA = "1000000";
  process.env.EMAIL_RATE_PER_SECOND = "10";
  resetConfig();
  resend = await startFakeResend();
  gate = await startGate(resend.url);
  useResendTransport(gate.url);
  startTestExecutor(2);
});

afterAll(async () => {
  await stopTestExecutor();
  await gate.close();
  await resend.close();
  clearResendTransport();
  delete process.env.EMAIL_RATE_PER_SECOND;
  resetConfig();
});

const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

async function finished(token: string, runId: string, timeoutMs = 40_000) {
  await waitFor(
    `run ${runId} to finish`,
    async () => {
      const status = (await getRun(token, runId)).body.status;
      return status === "SUCCESS" || status === "FAILED";
    },
    timeoutMs,
  );
  return (await getRun(token, runId)).body;
}

describe("retry after a provider failure, and cancel under load", () => {
  it("a retry sends exactly the emails the failed run did not, and reuses the nodes that succeeded", async () => {
    const { id, token } = await createTestAccount();
    const { workflowId, addresses } = await emailEveryRowWorkflow(id, 3000, "retry-fault-");
    gate.holdAfter(12); // 1,200 emails go through, then the provider breaks
    const failedId = (await enqueue(token, workflowId)).body.runId as string;
    await gate.waitForHeld(1, 30_000);
    await waitFor("the 12 forwarded batches", () => resend.emails().length >= 1200);
    resend.failNext(1000, 400); // every further request: a definite refusal
    await gate.release();
    const failed = await finished(token, failedId);
    expect(failed.status).toBe("FAILED");
    expect(failed.nodes.out.status).toBe("FAILED");
    const sentByFailed = resend.emails().length;
    expect(sentByFailed).toBe(1200);

    resend.reset(); // the provider is fixed (reset forgets the injected failures; the 1,200 stay counted above)
    const res = await call(retryHandler, { method: "POST", path: `/api/workflows/runs/${failedId}/retry`, token, params: { runId: failedId } });
    expect(res.status).toBe(202);
    const retried = await finished(token, res.body.runId);
    expect(retried.status).toBe("SUCCESS");
    for (const nodeId of ["t", "src"]) {
      expect(retried.nodes[nodeId]).toMatchObject({ reused: true, startedAt: failed.nodes[nodeId].startedAt, completedAt: failed.nodes[nodeId].completedAt });
    }
    const sentByRetry = resend.emails().map((e) => e.to[0]);
    expect(sentByRetry).toHaveLength(1800);
    expect(new Set([...sentByRetry, ...addresses]).size).toBe(3000);
    const db = await getDb();
    const ledger = await execRows<{ n: number; distinct_to: number }>(
      db,
      sql`select count(*)::int as n, count(distinct "to")::int as distinct_to from email_sends where run_id = ${failedId} and status = 'sent'`,
    );
    expect(ledger[0]).toEqual({ n: 3000, distinct_to: 3000 });
    console.log(`retry after a provider 400 (loadavg ${load()}):`);
    console.table({
      "emails by the failed run": sentByFailed,
      "emails by the retry": sentByRetry.length,
      "distinct in all (ledger)": Number(ledger[0].distinct_to),
      "sent twice": sentByFailed + sentByRetry.length - Number(ledger[0].distinct_to),
      "retry emailsSent (chain)": retried.result.emailsSent,
    });
  });

  it("cancels a RUNNING 20,000-email run within 5 s; nothing is sent after; the next run starts at once", async () => {
    resend.reset();
    const { id, token } = await createTestAccount();
    const { workflowId } = await emailEveryRowWorkflow(id, 20_000, "cancel-fault-");
    const big = (await enqueue(token, workflowId)).body.runId as string;
    // The next run of the same workflow: a small graph (the run snapshots the graph when it is enqueued).
    const small = await insertUpload(id, ["email"], [["next-1@example.com"], ["next-2@example.com"]]);
    const db = await getDb();
    await db.execute(sql`update workflows set graph = ${JSON.stringify(emailEveryRowGraph(small, { subject: "next", body: "b" }))}::jsonb where id = ${workflowId}`);
    const next = (await enqueue(token, workflowId)).body.runId as string;

    await waitFor("the big run to be sending", () => resend.emails().length >= 1000, 40_000);
    const askedAt = Date.now();
    const res = await call(cancelHandler, { method: "POST", path: `/api/workflows/runs/${big}/cancel`, token, params: { runId: big } });
    expect(res.status).toBe(202);
    const stopped = await finished(token, big);
    const stoppedMs = Date.now() - askedAt;
    const atStop = resend.emails().filter((e) => e.subject === "s").length;
    expect(stopped).toMatchObject({ status: "FAILED", error: "Cancelled" });
    expect(stopped.nodes.out.status).toBe("SKIPPED");

    const nextRun = await finished(token, next);
    expect(nextRun.status).toBe("SUCCESS");
    const nextStartMs = Date.parse(nextRun.startedAt) - Date.parse(stopped.completedAt);
    const after = resend.emails().filter((e) => e.subject === "s").length;
    const [ledger] = await execRows<{ n: number }>(db, sql`select count(*)::int as n from email_sends where run_id = ${big} and status = 'sent'`);
    console.log(`cancel a RUNNING 20,000-email run (loadavg ${load()}):`);
    console.table({
      "stopped after the cancel (ms)": stoppedMs,
      "emails before the stop": atStop,
      "emails of it after the stop": after - atStop,
      "next run started after the stop (ms)": nextStartMs,
    });
    expect(stoppedMs).toBeLessThanOrEqual(5000);
    expect(after).toBe(atStop);
    expect(Number(ledger.n)).toBe(atStop);
    expect(atStop).toBeLessThan(20_000);
    expect(nextStartMs).toBeLessThan(2000);
  });
});
