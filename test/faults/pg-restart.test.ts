/**
 * Fault: the PostgreSQL server is stopped and started again in the middle of a run (OUTPUT of N emails), on a server
 * of the test's own (test/faults/private-postgres.ts) so the shared one is never touched.
 * Expected: while the database is down the API answers 503 problem+json with Retry-After (never a 500); the embedded
 * executor gives the run up without failing a node and resumes it by itself within seconds of the database's return
 * (no sweep, no 60 s stale-heartbeat wait); the run ends SUCCESS with exactly N distinct emails at the fake Resend;
 * nothing is left RUNNING or PENDING; the pool answers again and the workflow's next run executes normally.
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execRows, openPostgres, setDbHandle } from "@/db/client";
import { migratePostgres } from "@/db/migrate";
import type { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { createTestAccount } from "@/test/support/accounts";
import { clearResendTransport, startFakeResend, useResendTransport, type FakeResend } from "@/test/support/fake-resend";
import { emailEveryRowWorkflow, enqueue, getRun, runToEnd, startTestExecutor, stopTestExecutor } from "@/test/runs/helpers";
import { startGate, waitFor, type Gate } from "./gate";
import { postgresBinDir, startPrivatePostgres, type PrivatePostgres } from "./private-postgres";

const N = 1000;
const available = postgresBinDir() !== null;

let pg: PrivatePostgres | undefined;
let handle: Awaited<ReturnType<typeof openPostgres>> | undefined;
let resend: FakeResend | undefined;
let gate: Gate | undefined;
let executor: EmbeddedExecutor;

beforeAll(async () => {
  if (!available) return;
  pg = await startPrivatePostgres();
  handle = await openPostgres(pg.url, { max: 10 });
  await migratePostgres(handle.db);
  setDbHandle(handle);
  resend = await startFakeResend();
  gate = await startGate(resend.url);
  useResendTransport(gate.url);
  executor = startTestExecutor(2);
});

afterAll(async () => {
  if (!available) return;
  // Whatever beforeAll got to: a failed initdb or migration must still stop the private server.
  await stopTestExecutor();
  await gate?.close();
  await resend?.close();
  clearResendTransport();
  await handle?.close().catch(() => {});
  setDbHandle(undefined);
  await pg?.destroy();
});

describe.runIf(available)("PostgreSQL stopped and restarted mid-run", () => {
  it("answers 503 while it is down, resumes the run by itself, and sends every email exactly once", async () => {
    const [server, g, fake, h] = [pg!, gate!, resend!, handle!];
    const { id, token } = await createTestAccount();
    const { workflowId, addresses } = await emailEveryRowWorkflow(id, N, `r`);

    g.holdAfter(3);
    const res = await enqueue(token, workflowId);
    expect(res.status).toBe(202);
    const runId = res.body.runId as string;
    await g.waitForHeld(1);

    await server.stop();
    // The held batch reaches the provider; recording it in the send ledger fails: the database is gone.
    await g.release();
    const down = await getRun(token, runId);
    expect(down.status).toBe(503);
    expect(down.headers.get("content-type")).toContain("application/problem+json");
    expect(down.headers.get("retry-after")).toBe("5");
    expect(down.body.code).toBe("service_unavailable");
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // the executor retries into the outage at least once
    await server.start();

    const db = h.db;
    // No sweep is called and the stale-heartbeat window is 60 s: only the executor's own retry can finish the run.
    await waitFor(
      "the run to end after the restart",
      async () => {
        const found = await execRows<{ status: string }>(db, sql`select status from runs where id = ${runId}`).catch(() => []);
        return found[0]?.status === "SUCCESS" || found[0]?.status === "FAILED";
      },
      30_000,
    );
    const run = (await getRun(token, runId)).body;
    expect(run.status).toBe("SUCCESS");
    expect(run.result.emailsSent).toBe(N);
    const recipients = fake.emails().map((e) => e.to[0]);
    expect(recipients).toHaveLength(N);
    expect(new Set(recipients)).toEqual(new Set(addresses));
    expect(await execRows(db, sql`select id from runs where status in ('RUNNING', 'PENDING')`)).toEqual([]);
    expect(await execRows(db, sql`select node_id from node_results where status in ('RUNNING', 'PENDING')`)).toEqual([]);

    // The queue continues on fresh connections.
    fake.reset();
    const next = await runToEnd(executor, token, workflowId);
    expect(next.status).toBe("SUCCESS");
    expect(fake.emails()).toHaveLength(N);
  });
});
