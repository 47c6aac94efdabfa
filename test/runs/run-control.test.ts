/**
 * Run control: queue position, trigger, the account-wide list, cancel (PENDING and RUNNING), retry with
 * reuse, and the preview `until` skip rule, through the real route handlers and the embedded executor.
 */
import { sql } from "drizzle-orm";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { resetConfig } from "@/lib/config";
import { GET as listAccountRunsHandler } from "@/app/api/runs/route";
import { POST as cancelHandler } from "@/app/api/workflows/runs/[runId]/cancel/route";
import { POST as retryHandler } from "@/app/api/workflows/runs/[runId]/retry/route";
import { POST as sendHandler } from "@/app/api/workflows/runs/[runId]/send/route";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";
import { enqueueRun } from "@/lib/engine/pg/enqueue-run";
import { getRun as getRunView } from "@/lib/services/runs/get-run";
import { emailEveryRowWorkflow, enqueue, fakeResendForRuns, getRun, startTestExecutor } from "./helpers";

const fixture = fakeResendForRuns();

beforeEach(() => fixture.resend.reset());

const cancel = (token: string, runId: string) =>
  call(cancelHandler, { method: "POST", path: `/api/workflows/runs/${runId}/cancel`, token, params: { runId } });
const retry = (token: string, runId: string) =>
  call(retryHandler, { method: "POST", path: `/api/workflows/runs/${runId}/retry`, token, params: { runId } });
const listAll = (token: string, query = "") => call(listAccountRunsHandler, { path: `/api/runs${query}`, token });

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("queue position, trigger, GET /api/runs and cancelling PENDING runs (no executor: runs stay queued)", () => {
  it("numbers waiting runs, cancels one at once, and lists the account's runs newest first with workflowName", async () => {
    const { id, token } = await createTestAccount();
    const { workflowId } = await emailEveryRowWorkflow(id, 1, "queued");
    const other = (await emailEveryRowWorkflow(id, 1, "other")).workflowId;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await enqueue(token, workflowId)).body.runId);
    await enqueue(token, other);

    const positions = await Promise.all(ids.map(async (runId) => (await getRun(token, runId)).body));
    expect(positions.map((r) => r.queuePosition)).toEqual([1, 2, 3]);
    expect(positions.every((r) => r.trigger === "manual" && r.mode === "live")).toBe(true);

    const cancelled = await cancel(token, ids[1]);
    expect(cancelled.status).toBe(202);
    expect(cancelled.body).toMatchObject({ runId: ids[1], status: "FAILED", cancelRequested: true });
    const view = (await getRun(token, ids[1])).body;
    expect(view).toMatchObject({ status: "FAILED", error: "Cancelled" });
    expect(view.queuePosition).toBeUndefined();
    expect(Object.values(view.nodes).every((n) => (n as { status: string }).status === "SKIPPED")).toBe(true);
    expect((await getRun(token, ids[2])).body.queuePosition).toBe(2);

    const again = await cancel(token, ids[1]);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("run_finished");
    const notFailedRetry = await retry(token, ids[0]);
    expect(notFailedRetry.status).toBe(409);
    expect(notFailedRetry.body.code).toBe("run_not_failed");

    const all = await listAll(token, "?limit=2");
    expect(all.status).toBe(200);
    expect(all.body.items).toHaveLength(2);
    expect(all.body.items[0]).toMatchObject({ workflowId: other, workflowName: "Test workflow", status: "PENDING", queuePosition: 1 });
    expect(all.body.items[1]).toMatchObject({ runId: ids[2], queuePosition: 2, trigger: "manual" });
    const rest = await listAll(token, `?limit=2&cursor=${all.body.nextCursor}`);
    expect(rest.body.items.map((r: { runId: string }) => r.runId)).toEqual([ids[1], ids[0]]);
    expect(rest.body.nextCursor).toBeNull();
    const failedOnly = await listAll(token, `?status=FAILED&workflowId=${workflowId}`);
    expect(failedOnly.body.items.map((r: { runId: string }) => r.runId)).toEqual([ids[1]]);
    expect((await listAll(token, "?status=DONE")).status).toBe(422);
    // Leave nothing queued for the executor of the next tests.
    for (const item of (await listAll(token, "?status=PENDING")).body.items) expect((await cancel(token, item.runId)).status).toBe(202);
  });
});

describe("with the executor", () => {
  beforeAll(() => {
    startTestExecutor();
  });

  it("retries a FAILED run: reused nodes keep their times and do not run again; the failed OUTPUT sends", async () => {
    const { id, token } = await createTestAccount();
    const { workflowId, addresses } = await emailEveryRowWorkflow(id, 3, "retry");
    fixture.resend.failNext(1, 400);
    const first = (await enqueue(token, workflowId)).body.runId as string;
    const failed = await until("the run to fail", async () => {
      const run = (await getRun(token, first)).body;
      return run.status === "FAILED" ? run : undefined;
    });
    expect(failed.nodes.out.status).toBe("FAILED");

    const res = await retry(token, first);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: "PENDING", retryOf: first, workflowId });
    expect(res.headers.get("location")).toBe(`/api/workflows/runs/${res.body.runId}`);
    const done = await until("the retry to finish", async () => {
      const run = (await getRun(token, res.body.runId)).body;
      return run.status === "SUCCESS" || run.status === "FAILED" ? run : undefined;
    });
    expect(done).toMatchObject({ status: "SUCCESS", trigger: "retry", retryOf: first });
    for (const nodeId of ["t", "src"]) {
      expect(done.nodes[nodeId]).toMatchObject({ status: "SUCCESS", reused: true, startedAt: failed.nodes[nodeId].startedAt });
    }
    expect(done.nodes.out.reused).toBeUndefined();
    expect(fixture.resend.emails().map((e) => e.to).flat().sort()).toEqual([...addresses].sort());
    // A retry of a SUCCESS run is refused.
    expect((await retry(token, res.body.runId)).body.code).toBe("run_not_failed");
  });

  it("cancels a RUNNING run before its next batch; the next run of the workflow starts right after", async () => {
    // The production pace (5 provider calls a second): the run's 30 batches take seconds, and the cancel finds it sending.
    process.env.EMAIL_RATE_PER_SECOND = "5";
    resetConfig();
    const { id, token } = await createTestAccount();
    const { workflowId } = await emailEveryRowWorkflow(id, 3000, "cancel");
    const first = (await enqueue(token, workflowId)).body.runId as string;
    const second = (await enqueue(token, workflowId)).body.runId as string;
    await until("some emails out", async () => (fixture.resend.emails().length > 0 ? true : undefined));
    // The first run's provider calls (its batches' keys begin with its id); the second run's come after it stops.
    const callsOfFirst = () => fixture.resend.requests.filter((r) => String(r.headers["idempotency-key"] ?? "").startsWith(`${first}:`)).length;
    const callsAtCancel = callsOfFirst();
    expect(callsAtCancel).toBeGreaterThan(0);
    const res = await cancel(token, first);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: "RUNNING", cancelRequested: true });
    const stopped = await until("the cancel", async () => {
      const run = (await getRun(token, first)).body;
      return run.status === "FAILED" ? run : undefined;
    });
    // Stopped at a batch-group boundary: the group in flight, and at most one more that a cached check let start
    // (8 batches a group, one provider call each).
    expect(callsOfFirst() - callsAtCancel).toBeLessThanOrEqual(2 * 8);
    expect(stopped.error).toBe("Cancelled");
    expect(stopped.nodes.out.status).toBe("SKIPPED");
    const sentBefore = fixture.resend.emails().filter((e) => e.subject === "s").length;
    expect(sentBefore).toBeLessThan(3000);
    const next = await until("the next run to start", async () => {
      const run = (await getRun(token, second)).body;
      return run.status !== "PENDING" ? run : undefined;
    });
    expect(next.status).not.toBe("PENDING");
    await cancel(token, second);
    // Stopped before the next test: a batch of it still in flight would take that test's provider failure.
    await until("the second run to stop", async () => {
      const run = (await getRun(token, second)).body;
      return run.status === "FAILED" || run.status === "SUCCESS" ? run : undefined;
    });
    process.env.EMAIL_RATE_PER_SECOND = "200";
    resetConfig();
  });

  // A provider that asks to wait a long time: the cancel must not wait for it (the wait is cut short, not waited out).
  for (const [label, status] of [["429 (the shared limiter holds every sender)", 429], ["503 with Retry-After (backoff)", 503]] as const) {
    it(`cancels a run whose batch waits out a ${label} of 60 s without waiting for it, sending nothing`, async () => {
      const { id, token } = await createTestAccount();
      const prefix = `wait${status}`;
      const { workflowId } = await emailEveryRowWorkflow(id, 3, prefix);
      fixture.resend.failNext(1, status, 60);
      const runId = (await enqueue(token, workflowId)).body.runId as string;
      try {
        await until("the provider's refusal", async () => (fixture.resend.requests.some((r) => r.status === status) ? true : undefined));
        await new Promise((r) => setTimeout(r, 300)); // the batch is now waiting
        const callsAtCancel = fixture.resend.requests.length;
        expect((await cancel(token, runId)).status).toBe(202);
        const stopped = await until("the cancel", async () => {
          const run = (await getRun(token, runId)).body;
          return run.status === "FAILED" ? run : undefined;
        });
        // Had the batch waited out the 60 s, it would have called the provider again; it stopped instead.
        expect(fixture.resend.requests.length).toBe(callsAtCancel);
        expect(stopped.error).toBe("Cancelled");
        expect(stopped.nodes.out.status).toBe("SKIPPED");
        expect(fixture.resend.emails().filter((e) => e.to.some((to) => to.startsWith(prefix)))).toHaveLength(0);
      } finally {
        // The 429 left the provider key's limiter holding every sender for 60 s: later tests must not wait for it.
        await (await getDb()).execute(sql`delete from email_send_pacing`);
      }
    });
  }

  it("a preview with `until` executes only that node and its ancestors", async () => {
    const { id } = await createTestAccount();
    const { workflowId } = await emailEveryRowWorkflow(id, 2, "until");
    const { run } = await enqueueRun(id, workflowId, undefined, { mode: "preview", untilNodeId: "src" });
    const done = await until("the preview", async () => {
      const view = await getRunView(id, run.runId, "map");
      return view.status === "SUCCESS" || view.status === "FAILED" ? view : undefined;
    });
    const nodes = done.nodes as Record<string, { status: string }>;
    expect(done.status).toBe("SUCCESS");
    expect(nodes.t.status).toBe("SUCCESS");
    expect(nodes.src.status).toBe("SUCCESS");
    expect(nodes.out.status).toBe("SKIPPED");
    expect(fixture.resend.emails().filter((e) => e.to.some((to) => to.startsWith("until")))).toHaveLength(0);
  });

  it("a preview made with `until` cannot be sent: 409, no run derived, nothing sent", async () => {
    const { id, token } = await createTestAccount();
    const { workflowId } = await emailEveryRowWorkflow(id, 2, "untilsend");
    const { run } = await enqueueRun(id, workflowId, undefined, { mode: "preview", untilNodeId: "src" });
    await until("the preview", async () => {
      const view = await getRunView(id, run.runId, "map");
      return view.status === "SUCCESS" || view.status === "FAILED" ? view : undefined;
    });
    const send = await call(sendHandler, { method: "POST", path: `/api/workflows/runs/${run.runId}/send`, token, params: { runId: run.runId } });
    expect(send.status).toBe(409);
    expect(send.body).toMatchObject({ code: "conflict" });
    expect(send.body.detail).toContain('tested node "src" only');
    const runs = await call(listAccountRunsHandler, { path: `/api/runs?workflowId=${workflowId}`, token });
    expect(runs.body.items.map((r: { runId: string }) => r.runId)).toEqual([run.runId]);
    expect(fixture.resend.emails().filter((e) => e.to.some((to) => to.startsWith("untilsend")))).toHaveLength(0);
  });
});
