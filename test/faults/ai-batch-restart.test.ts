/**
 * Fault: batch mode across a restart. An AI node sends 1,000 items to a local OpenAI Batch API that finishes 90 s
 * after the batch was created; the executor process polling it is killed with SIGKILL and a fresh process takes
 * the run over. The new process must poll the same batch (never submit again), record each answer once, and the
 * run must send 1,000 emails. Then a second run: killed and taken over the same way, and cancelled while the
 * provider works: the provider's batch is cancelled. Prints the figures (and the load average).
 */
import { readFileSync } from "node:fs";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execRows, getDb, type Db } from "@/db/client";
import { accounts } from "@/db/schema";
import { encryptSecret } from "@/lib/crypto";
import { createTestAccount } from "@/test/support/accounts";
import { startFakeBatchApi, type FakeBatchApi } from "@/test/support/fake-batch-api";
import { startFakeResend, type FakeResend } from "@/test/support/fake-resend";
import { enqueue, insertUpload, insertWorkflow } from "@/test/runs/helpers";
import { cancel, itemOf, peopleRows, perRowGraph } from "@/test/ai/helpers";
import { inWorkerDatabase, startExecutorWorker, withTimeout } from "./executor-worker";
import { waitFor } from "./gate";

const ITEMS = 1000;
const FINISH_AFTER_MS = 90_000;
/** The workers poll every second (AI_BATCH_POLL_MS; the product's 30 s would make this test last minutes more). */
const WORKER_ENV = { AI_BATCH_POLL_MS: "1000" };
const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

let resend: FakeResend;

beforeAll(async () => {
  resend = await startFakeResend();
});

afterAll(async () => {
  await resend.close();
});

const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

async function enqueueBatchRun(api: FakeBatchApi): Promise<{ runId: string; token: string }> {
  const { id, token } = await createTestAccount();
  await (await getDb())
    .update(accounts)
    .set({ aiProvider: "openai", aiModel: "gpt-4o-mini", aiBaseUrl: api.url, aiKeyEncrypted: encryptSecret("sk-batch-1234"), aiKeyLast4: "1234" })
    .where(eq(accounts.id, id));
  const uploadId = await insertUpload(id, ["name", "email"], peopleRows(ITEMS), 1000);
  const res = await enqueue(token, await insertWorkflow(id, perRowGraph(uploadId, { mode: "batch" })));
  expect(res.status).toBe(202);
  return { runId: res.body.runId as string, token };
}

async function runState(db: Db, runId: string) {
  const [run] = await execRows<{ status: string; error: string | null }>(db, sql`select status, error from runs where id = ${runId}`);
  const [items] = await execRows<{ done: number; total: number; cost: number }>(
    db,
    sql`select count(*) filter (where status = 'done')::int as done, count(*)::int as total, coalesce(sum(cost_usd), 0)::float8 as cost
        from ai_items where run_id = ${runId}`,
  );
  const batches = await execRows<{ state: string; batch_id: string }>(db, sql`select state, batch_id from ai_batches where run_id = ${runId} order by seq`);
  return { status: run.status, error: run.error, done: Number(items.done), total: Number(items.total), cost: Number(items.cost), batches };
}

/** Starts an executor, waits until it has submitted the batch and polled it twice, and kills it with SIGKILL. */
async function killWhilePolling(api: FakeBatchApi, workerEnv: Record<string, string>): Promise<void> {
  const doomed = startExecutorWorker(resend.url, { ...workerEnv, ...WORKER_ENV });
  await withTimeout(
    "the batch to be submitted and polled",
    Promise.race([
      waitFor("two polls", () => api.stats.created === 1 && api.batches[0].polls >= 2, 120_000),
      doomed.exited.then((c) => Promise.reject(new Error(`worker exited: ${c}`))),
    ]),
    125_000,
  );
  doomed.child.kill("SIGKILL");
  expect(await doomed.exited).toBe("SIGKILL");
}

describe("AI batch mode across a kill -9 of the executor", () => {
  it(`polls the same batch after the restart and records each of ${ITEMS} answers once`, async () => {
    const api = await startFakeBatchApi("openai", { finishAfterMs: FINISH_AFTER_MS });
    try {
      const answered = new Map<string, number>();
      api.answer((text) => {
        const name = itemOf(text);
        answered.set(name, (answered.get(name) ?? 0) + 1);
        return { greeting: `Hi ${name}` };
      });
      const started = Date.now();
      const { value, workerEnv, openForCheck } = await inWorkerDatabase("flowmail-fault-ai-batch-", () => enqueueBatchRun(api));
      await killWhilePolling(api, workerEnv);
      const pollsBeforeKill = api.stats.polls;
      expect(api.batches[0].status).toBe("in_progress");

      const restarted = startExecutorWorker(resend.url, { ...workerEnv, ...WORKER_ENV });
      expect(await withTimeout("the restarted worker to finish", restarted.exited, 200_000)).toBe(0);
      const seconds = (Date.now() - started) / 1000;

      const checkDb = await openForCheck();
      try {
        const state = await runState(checkDb.db, value.runId);
        expect(state).toMatchObject({ status: "SUCCESS", done: ITEMS, total: ITEMS });
        expect(state.batches).toEqual([{ state: "collected", batch_id: api.batches[0].id }]);
        // gpt-4o-mini at half its list price: 20 input and 10 output tokens an item.
        expect(state.cost).toBeCloseTo((ITEMS * (20 * 0.15 + 10 * 0.6)) / 1_000_000 / 2, 9);
      } finally {
        await checkDb.close();
      }
      // One batch, submitted once; its answers made once and read once; every item answered once.
      expect(api.stats.created).toBe(1);
      expect(api.stats.files).toBe(1);
      expect(api.stats.resultReads).toBe(1);
      expect(answered.size).toBe(ITEMS);
      expect([...answered.values()].every((n) => n === 1)).toBe(true);
      const sent = resend.emails().filter((e) => e.text?.startsWith("Hi P"));
      expect(new Set(sent.map((e) => e.to[0])).size).toBe(ITEMS);
      expect(sent).toHaveLength(ITEMS);
      console.log(
        `ai-batch-restart: ${ITEMS} items, 1 batch submitted, ${pollsBeforeKill} poll(s) before the kill, ${api.stats.polls - pollsBeforeKill} after; ` +
          `run finished ${seconds.toFixed(1)} s after enqueue (provider: ${FINISH_AFTER_MS / 1000} s); load ${load()}`,
      );
    } finally {
      await api.close();
    }
  });

  // The cancel comes through the route while the restarted process polls: the database is shared only on PostgreSQL.
  it.skipIf(!onPostgres)("a cancel of the run after the takeover cancels the provider's batch", async () => {
    const api = await startFakeBatchApi("openai", { finishAfterMs: FINISH_AFTER_MS });
    try {
      const { value, workerEnv, openForCheck } = await inWorkerDatabase("flowmail-fault-ai-batch-cancel-", () => enqueueBatchRun(api));
      await killWhilePolling(api, workerEnv);
      const polls = api.stats.polls;
      const restarted = startExecutorWorker(resend.url, { ...workerEnv, ...WORKER_ENV });
      await withTimeout("the new process to poll", waitFor("a poll by the new process", () => api.stats.polls >= polls + 2, 60_000), 65_000);
      expect((await cancel(value.token, value.runId)).status).toBe(202);
      expect(await withTimeout("the restarted worker to finish", restarted.exited, 120_000)).toBe(0);
      expect(api.stats.created).toBe(1);
      expect(api.stats.cancels).toBe(1);
      expect(api.batches[0].cancelled).toBe(true);
      const checkDb = await openForCheck();
      try {
        const state = await runState(checkDb.db, value.runId);
        expect(state).toMatchObject({ status: "FAILED", error: "Cancelled", done: 0 });
        expect(state.batches).toEqual([{ state: "cancelled", batch_id: api.batches[0].id }]);
      } finally {
        await checkDb.close();
      }
      console.log(`ai-batch-restart: cancel after the takeover cancelled the provider's batch (${api.stats.polls} polls in all); load ${load()}`);
    } finally {
      await api.close();
    }
  });
});
