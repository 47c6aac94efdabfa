/**
 * Load fault: 1,000 runs over 20 workflows enqueued at once through the real enqueue route handler (run rate limit
 * raised through RUN_RATE_LIMIT_PER_MINUTE), worked through by the process-wide embedded executor (4 workers).
 * Every workflow's runs must execute one at a time in enqueue (seq) order, none lost, all terminal. Graphs are a
 * single TRIGGER so the queue (claim, start, finalize, wake-up), not the nodes, is what is exercised.
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execRows, getDb } from "@/db/client";
import { resetConfig } from "@/lib/config";
import type { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { createTestAccount } from "@/test/support/accounts";
import { enqueue, insertWorkflow, startTestExecutor, stopTestExecutor, trigger } from "@/test/runs/helpers";

const WORKFLOWS = 20;
const RUNS = 1000;

let executor: EmbeddedExecutor;

beforeAll(() => {
  process.env.RUN_RATE_LIMIT_PER_MINUTE = "100000";
  resetConfig();
  executor = startTestExecutor(4);
});

afterAll(async () => {
  await stopTestExecutor();
  delete process.env.RUN_RATE_LIMIT_PER_MINUTE;
  resetConfig();
});

type RunRow = { id: string; workflow_id: string; seq: string; status: string; started_at: Date | string | null; completed_at: Date | string | null };

const ms = (d: Date | string | null) => new Date(d as string).getTime();

describe("a flood of runs", () => {
  it(`${RUNS} runs over ${WORKFLOWS} workflows: each workflow's runs one at a time in enqueue order, none lost, all terminal`, async () => {
    const { id, token } = await createTestAccount();
    const workflowIds: string[] = [];
    for (let w = 0; w < WORKFLOWS; w++) {
      workflowIds.push(
        await insertWorkflow(id, {
          nodes: [trigger],
          edges: [],
        }, `Flood ${w}`),
      );
    }

    // All at once, interleaved across workflows (run i goes to workflow i mod 20).
    const answers = await Promise.all(Array.from({ length: RUNS }, (_, i) => enqueue(token, workflowIds[i % WORKFLOWS])));
    expect(answers.map((a) => a.status)).toEqual(Array(RUNS).fill(202));
    const enqueued = new Set(answers.map((a) => a.body.runId as string));
    expect(enqueued.size).toBe(RUNS);

    const db = await getDb();
    // Every enqueue poked the executor, which works each workflow's queue until it is empty.
    await Promise.race([
      executor.idle(),
      new Promise((_, reject) => setTimeout(() => reject(new Error("the executor did not drain the queue in time")), 120_000).unref()),
    ]);

    const rows = await execRows<RunRow>(db, sql`select id, workflow_id, seq::text as seq, status, started_at, completed_at from runs order by runs.seq`);
    expect(new Set(rows.map((r) => r.id))).toEqual(enqueued); // none lost, none invented
    expect(rows.filter((r) => r.status !== "SUCCESS")).toEqual([]);
    for (const workflowId of workflowIds) {
      const mine = rows.filter((r) => r.workflow_id === workflowId); // in seq (enqueue) order
      expect(mine).toHaveLength(RUNS / WORKFLOWS);
      const byStart = [...mine].sort((a, b) => ms(a.started_at) - ms(b.started_at) || Number(a.seq) - Number(b.seq));
      expect(byStart.map((r) => r.id)).toEqual(mine.map((r) => r.id));
      for (let i = 1; i < mine.length; i++) {
        // One at a time: a run starts only after the previous one of its workflow completed.
        expect(ms(mine[i].started_at)).toBeGreaterThanOrEqual(ms(mine[i - 1].completed_at));
        expect(ms(mine[i].completed_at)).toBeGreaterThanOrEqual(ms(mine[i].started_at));
      }
    }
  });
});
