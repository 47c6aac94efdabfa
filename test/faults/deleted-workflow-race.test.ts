/**
 * A deleted workflow's runs never execute. DELETE races 20 enqueues (half with an Idempotency-Key, half on the
 * token hot path) while the embedded executor claims: every run the enqueues created must either be failed with
 * "Workflow deleted" before it started, or have been claimed before the delete committed. Repeated 20 times.
 * (Before the fix, a run accepted while the delete was under way escaped being failed and was claimed and executed
 * after the delete: 4 of 4 tries.) PostgreSQL only: PGlite runs one statement at a time, so nothing interleaves.
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DELETE as deleteWorkflowRoute } from "@/app/api/workflows/[workflowId]/route";
import { execRows, getDb } from "@/db/client";
import { resetConfig } from "@/lib/config";
import type { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";
import { enqueue, insertUpload, insertWorkflow, startTestExecutor, stopTestExecutor, trigger } from "@/test/runs/helpers";

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
const ROUNDS = 20;
const ENQUEUES = 20;

type RunRow = { id: string; status: string; error: string | null; started_at: string | null; executed_nodes: number };

describe.runIf(onPostgres)("DELETE racing enqueues", () => {
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

  it(`no run of a deleted workflow executes (${ROUNDS} rounds of ${ENQUEUES} enqueues)`, async () => {
    const account = await createTestAccount();
    const uploadId = await insertUpload(account.id, ["email"], [["a@example.com"]]);
    const db = await getDb();
    let accepted = 0;
    let failedAsDeleted = 0;
    let ranBeforeDelete = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const workflowId = await insertWorkflow(account.id, {
        nodes: [trigger, { id: "src", type: "DATA_SOURCE", data: { uploadId } }],
        edges: [{ source: "t", target: "src" }],
      });
      const enqueues = Array.from({ length: ENQUEUES }, (_, i) =>
        enqueue(account.token, workflowId, i % 2 === 0 ? { "Idempotency-Key": `race-${round}-${i}` } : {}),
      );
      // The delete starts while the enqueues are in flight, a little later each round.
      await new Promise((resolve) => setTimeout(resolve, round % 5));
      const deleted = await call(deleteWorkflowRoute, { method: "DELETE", path: `/api/workflows/${workflowId}`, token: account.token, params: { workflowId } });
      expect(deleted.status).toBe(204);
      // Taken after the delete committed: a run that started after this instant ran for a deleted workflow.
      const [{ committed }] = await execRows<{ committed: string }>(db, sql`select clock_timestamp()::text as committed`);
      const answers = await Promise.all(enqueues);
      for (const answer of answers) expect([202, 404]).toContain(answer.status);
      accepted += answers.filter((a) => a.status === 202).length;
      // Let the executor claim anything it still can.
      executor.poke(workflowId);
      await executor.idle();

      const rows = await execRows<RunRow>(
        db,
        sql`select r.id, r.status, r.error, r.started_at::text as started_at,
              (select count(*)::int from node_results n where n.run_id = r.id and n.status = 'SUCCESS') as executed_nodes
            from runs r where r.workflow_id = ${workflowId}`,
      );
      for (const run of rows) {
        expect(run.status, run.id).not.toBe("PENDING");
        const startedAfterDelete = run.started_at !== null && Date.parse(run.started_at) > Date.parse(committed);
        expect(startedAfterDelete, `${run.id} started at ${run.started_at}, after the delete committed at ${committed}`).toBe(false);
        if (run.started_at === null) {
          expect(run).toMatchObject({ status: "FAILED", error: "Workflow deleted", executed_nodes: 0 });
          failedAsDeleted++;
        } else ranBeforeDelete++;
      }
    }
    console.log(`deleted-workflow race: ${accepted} enqueues accepted; ${failedAsDeleted} runs failed as deleted, ${ranBeforeDelete} claimed before the delete`);
  });
});
