import "server-only";
import { sql } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import { log } from "@/lib/log";
import { loadAiSettings, type AiSettings } from "@/lib/ai/settings";
import { batchTag, cancelProviderBatch, classifyBatchError, findSubmittedBatch, hasBatchApi } from "./provider";
import { pgBatchStore } from "./store";

const CANCEL_TIMEOUT_MS = 30_000;

/**
 * A cancelled run's provider batches still open (its AI node never saw the cancel: no process held the run when it was
 * cancelled, and the run was finalized without running the node again). Each is cancelled at the provider and marked
 * `cancelled`; one that never got its id (a crash mid-submission) is looked up at the provider by its tag and
 * cancelled there if found, else marked `abandoned`. Failures are logged: the provider ends a batch on its own within
 * 24 h, unread. Called once per cancelled run: one statement when it has none.
 */
export async function cancelOpenBatchesOfRun(db: Db, accountId: string, runId: string): Promise<void> {
  const rows = await execRows<{ run_id: string; node_id: string; seq: number; batch_id: string | null; item_count: number; created_ms: number | string }>(
    db,
    sql`select b.run_id, b.node_id, b.seq, b.batch_id, b.item_count, (extract(epoch from b.created_at) * 1000)::float8 as created_ms from ai_batches b
        where b.run_id = (select coalesce(r.chain_root_id, r.id) from runs r where r.id = ${runId})
          and b.account_id = ${accountId} and b.state in ('submitting', 'running')`,
  );
  if (rows.length === 0) return;
  const settings = await loadAiSettings(db, accountId);
  for (const row of rows) {
    let state: "cancelled" | "abandoned" = "abandoned";
    let batchId = row.batch_id;
    if (settings) {
      try {
        if (!batchId && hasBatchApi(settings.provider)) batchId = await lookUp(db, settings, accountId, row);
        if (batchId) {
          await cancelProviderBatch(settings, batchId, { timeoutMs: CANCEL_TIMEOUT_MS });
          state = "cancelled";
        }
      } catch (error) {
        log.warn("could not cancel an AI batch at the provider", { runId, batchId, error: classifyBatchError(error).message });
      }
    }
    await db.execute(sql`update ai_batches set state = ${state}, batch_id = ${batchId}, ended_at = now(), items = '[]'::jsonb
      where run_id = ${row.run_id} and node_id = ${row.node_id} and seq = ${row.seq} and state in ('submitting', 'running')`);
  }
}

/** The provider batch of a row recorded without its id, if the provider has it (an unsure answer counts as none). */
async function lookUp(
  db: Db,
  settings: AiSettings,
  accountId: string,
  row: { run_id: string; node_id: string; seq: number; item_count: number; created_ms: number | string },
): Promise<string | null> {
  const found = await findSubmittedBatch(
    settings,
    { tag: batchTag({ chainRunId: row.run_id, nodeId: row.node_id }, row.seq), itemCount: row.item_count, sinceMs: Number(row.created_ms) },
    (ids) => pgBatchStore(db).knownBatchIds(accountId, ids),
    { timeoutMs: CANCEL_TIMEOUT_MS },
  );
  return found.kind === "found" ? found.batchId : null;
}
