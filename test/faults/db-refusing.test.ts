/**
 * Database outage (CONTRACT 12): PostgreSQL refuses new connections for 10 s (`ALTER DATABASE … ALLOW_CONNECTIONS
 * false`, as a superuser, plus pg_terminate_backend so the pooled connections go too) in the middle of a 3,000-email
 * run, five times. Expected each time: every API answer during the outage is 200 or 503 problem+json with Retry-After,
 * never a 500; the run pauses and resumes by itself, ends SUCCESS, no node FAILED; every email exactly once.
 * Prints the figures. PostgreSQL only (PGlite has no connections to refuse).
 */
import { sql } from "drizzle-orm";
import { readFileSync } from "node:fs";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as listAccountRunsHandler } from "@/app/api/runs/route";
import { execRows, getDb } from "@/db/client";
import { resetConfig } from "@/lib/config";
import type { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { createTestAccount } from "@/test/support/accounts";
import { clearResendTransport, startFakeResend, useResendTransport, type FakeResend } from "@/test/support/fake-resend";
import { call } from "@/test/support/http";
import { emailEveryRowWorkflow, enqueue, getRun, startTestExecutor, stopTestExecutor } from "@/test/runs/helpers";
import { waitFor } from "./gate";

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
const EMAILS = 3000;
const ROUNDS = 5;
const OUTAGE_MS = 10_000;

let resend: FakeResend;
let admin: postgres.Sql | undefined;
let executor: EmbeddedExecutor;
let dbName = "";

beforeAll(async () => {
  process.env.EMAIL_RATE_PER_SECOND = "40";
  process.env.EMAIL_DAILY_QUOTA = "1000000";
  resetConfig();
  resend = await startFakeResend();
  useResendTransport(resend.url);
  executor = startTestExecutor(2);
  if (onPostgres) {
    admin = postgres(process.env.TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
    dbName = new URL(process.env.TEST_DATABASE_CURRENT_URL!).pathname.slice(1);
  }
});

afterAll(async () => {
  if (admin) await admin.unsafe(`alter database "${dbName}" allow_connections true`).catch(() => {});
  await stopTestExecutor();
  await resend.close();
  clearResendTransport();
  await admin?.end({ timeout: 2 });
  delete process.env.EMAIL_RATE_PER_SECOND;
  resetConfig();
});

async function refuseConnections(): Promise<void> {
  await admin!.unsafe(`alter database "${dbName}" allow_connections false`);
  await admin!`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${dbName} and pid <> pg_backend_pid()`;
}

describe.runIf(onPostgres)("PostgreSQL refusing connections for 10 s mid-run, five times", () => {
  it("pauses and resumes every run: SUCCESS, exactly once, never a 500", async () => {
    const { id, token } = await createTestAccount();
    const figures: Record<string, number | string>[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const { workflowId, addresses } = await emailEveryRowWorkflow(id, EMAILS, `outage${round}-`);
      resend.reset();
      const runId = (await enqueue(token, workflowId)).body.runId as string;
      await waitFor("the run to be sending", () => resend.emails().length >= 300, 30_000);
      await refuseConnections();
      const outageStart = Date.now();
      const statuses = new Map<number, number>();
      let lastRetryAfter: string | null = null;
      while (Date.now() - outageStart < OUTAGE_MS) {
        // The run view and the account-wide list, as a person watching the run would poll them.
        for (const res of [await getRun(token, runId), await call(listAccountRunsHandler, { path: "/api/runs", token })]) {
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status === 503) lastRetryAfter = res.headers.get("retry-after");
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const sentDuringOutage = resend.emails().length;
      await admin!.unsafe(`alter database "${dbName}" allow_connections true`);
      const back = Date.now();
      await waitFor("the first email after the outage", () => resend.emails().length > sentDuringOutage, 30_000);
      const resumedMs = Date.now() - back;
      await waitFor(
        "the run to finish",
        async () => {
          const res = await getRun(token, runId);
          return res.status === 200 && (res.body.status === "SUCCESS" || res.body.status === "FAILED");
        },
        40_000,
      );
      const run = (await getRun(token, runId)).body;
      const delivered = resend.emails().map((e) => e.to[0]);
      figures.push({
        round,
        status: run.status,
        delivered: delivered.length,
        distinct: new Set(delivered).size,
        "answers 200": statuses.get(200) ?? 0,
        "answers 503": statuses.get(503) ?? 0,
        "answers 500": statuses.get(500) ?? 0,
        "other answers": [...statuses.keys()].filter((k) => ![200, 503, 500].includes(k)).join(" ") || "-",
        "resumed after reopen (ms)": resumedMs,
      });
      expect(run.status, JSON.stringify(run.error)).toBe("SUCCESS");
      expect(Object.values(run.nodes).map((n) => (n as { status: string }).status)).toEqual(["SUCCESS", "SUCCESS", "SUCCESS"]);
      expect(delivered).toHaveLength(EMAILS);
      expect(new Set(delivered)).toEqual(new Set(addresses));
      expect(statuses.get(500) ?? 0).toBe(0);
      expect([...statuses.keys()].every((status) => status === 200 || status === 503)).toBe(true);
      expect(statuses.get(503) ?? 0).toBeGreaterThan(0);
      expect(lastRetryAfter).toMatch(/^\d+$/);
    }
    const db = await getDb();
    expect(await execRows(db, sql`select id from runs where status in ('RUNNING', 'PENDING')`)).toEqual([]);
    console.log(`db-refusing (${ROUNDS} × ${OUTAGE_MS / 1000} s, loadavg ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}):`);
    console.table(figures);
    await executor.idle();
  });
});
