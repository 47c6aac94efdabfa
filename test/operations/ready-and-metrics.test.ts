// Readiness (database, migrations, executor) and the Prometheus endpoint: opt-in by METRICS_TOKEN, bearer-protected,
// `flowmail_` names, queue gauges read from the database, runs and requests counted, no id or address in any label.
import { sql } from "drizzle-orm";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { GET as ready } from "@/app/api/health/ready/route";
import { GET as metricsRoute } from "@/app/api/metrics/route";
import { execRows, getDb } from "@/db/client";
import { resetConfig } from "@/lib/config";
import { resetMetrics } from "@/lib/observability/metrics";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";
import { emailEveryRowWorkflow, enqueue, fakeResendForRuns, startTestExecutor, stopTestExecutor } from "@/test/runs/helpers";

fakeResendForRuns();

afterEach(() => {
  delete process.env.METRICS_TOKEN;
  resetConfig();
});
afterAll(() => resetMetrics());

const scrape = (token?: string) => call(metricsRoute, { path: "/api/metrics", ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}) });

/** The value of one sample line (`name{labels} value`), or undefined when the exposition has no such line. */
function sample(text: string, name: string, labels = ""): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(labels ? `${name}{${labels}}` : `${name} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

describe("GET /api/health/ready", () => {
  it("answers 200 with the database, the migrations and this process's executor", async () => {
    const res = await call(ready, { path: "/api/health/ready" });
    expect(res.body).toEqual({ database: "ok", migrations: "current", executor: "off" });
    expect(res.status).toBe(200);
    startTestExecutor();
    expect((await call(ready, { path: "/api/health/ready" })).body.executor).toBe("running");
    await stopTestExecutor();
  });

  it("answers 503 naming the migrations when the newest migration is not applied", async () => {
    const db = await getDb();
    const [latest] = await execRows<{ id: number; hash: string; created_at: string }>(db, sql`select id, hash, created_at from drizzle.__drizzle_migrations order by created_at desc limit 1`);
    await db.execute(sql`delete from drizzle.__drizzle_migrations where id = ${latest.id}`);
    try {
      const res = await call(ready, { path: "/api/health/ready" });
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ database: "ok", migrations: "behind" });
    } finally {
      await db.execute(sql`insert into drizzle.__drizzle_migrations (id, hash, created_at) values (${latest.id}, ${latest.hash}, ${latest.created_at})`);
    }
    expect((await call(ready, { path: "/api/health/ready" })).status).toBe(200);
  });
});

describe("GET /api/metrics", () => {
  it("does not exist without METRICS_TOKEN", async () => {
    const res = await scrape("anything");
    expect(res.status).toBe(404);
  });

  it("requires the bearer token", async () => {
    process.env.METRICS_TOKEN = "metrics-secret-1";
    resetConfig();
    expect((await scrape()).status).toBe(401);
    const wrong = await scrape("metrics-secret-2");
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const right = await scrape("metrics-secret-1");
    expect(right.status).toBe(200);
    expect(right.headers.get("content-type")).toMatch(/^text\/plain/);
  });

  it("reports the queue from the database, finished runs, emails and requests by route pattern", async () => {
    process.env.METRICS_TOKEN = "metrics-secret-1";
    resetConfig();
    resetMetrics();
    const { id, token } = await createTestAccount({ email: "metrics-owner@example.com" });
    const { workflowId } = await emailEveryRowWorkflow(id, 3, "metrics-recipient-");
    // No executor yet: the runs wait in the queue.
    for (let i = 0; i < 2; i++) expect((await enqueue(token, workflowId)).status).toBe(202);
    await execRows(await getDb(), sql`update runs set enqueued_at = now() - interval '90 seconds' where workflow_id = ${workflowId}`);
    let text = (await scrape("metrics-secret-1")).text;
    expect(sample(text, "flowmail_runs_pending")).toBe(2);
    expect(sample(text, "flowmail_oldest_pending_run_age_seconds")).toBeGreaterThanOrEqual(89);
    expect(sample(text, "flowmail_executor_slots_busy")).toBe(0);

    const executor = startTestExecutor(4);
    executor.poke(workflowId);
    await executor.idle();
    text = (await scrape("metrics-secret-1")).text;
    expect(sample(text, "flowmail_runs_pending")).toBe(0);
    expect(sample(text, "flowmail_oldest_pending_run_age_seconds")).toBe(0);
    expect(sample(text, "flowmail_executor_slots")).toBe(4);
    expect(sample(text, "flowmail_runs_finished_total", 'status="SUCCESS",trigger="manual"')).toBe(2);
    expect(sample(text, "flowmail_run_duration_seconds_count", 'status="SUCCESS"')).toBe(2);
    expect(sample(text, "flowmail_emails_total", 'transport="resend",status="sent"')).toBe(6);
    expect(sample(text, "flowmail_provider_responses_total", 'transport="resend",status_code="200"')).toBeGreaterThanOrEqual(1);
    expect(sample(text, "flowmail_send_slot_wait_seconds_count")).toBeGreaterThanOrEqual(1);
    expect(sample(text, "flowmail_http_requests_total", 'route="/api/workflows/[workflowId]/run",method="POST",status="202"')).toBe(2);
    expect(sample(text, "flowmail_http_request_duration_seconds_count", 'route="/api/workflows/[workflowId]/run",method="POST"')).toBe(2);
    // Every metric is ours, and no label names an account, a workflow or an address.
    const names = new Set(text.split("\n").filter((l) => l && !l.startsWith("#")).map((l) => l.split(/[{ ]/)[0]));
    expect([...names].every((n) => n.startsWith("flowmail_"))).toBe(true);
    for (const secret of [id, workflowId, "metrics-owner", "metrics-recipient", "example.com", "metrics-secret"]) expect(text).not.toContain(secret);
  });
});
