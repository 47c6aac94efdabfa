import "server-only";
import { sql } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import { log } from "@/lib/log";
import { loadAiSettings } from "@/lib/ai/settings";
import { cancelProviderBatch, classifyBatchError } from "./provider";

const CANCEL_TIMEOUT_MS = 30_000;

/**
 * A cancelled run's provider batches still open (its AI node never saw the cancel: no process held the run when it was
 * cancelled, and the run was finalized without running the node again). Each is cancelled at the provider and marked
 * `cancelled`; one that never got its id (a crash mid-submission) is marked `abandoned`. Failures are logged: the
 * provider ends a batch on its own within 24 h, unread. Called once per cancelled run: one statement when it has none.
 */
export async function cancelOpenBatchesOfRun(db: Db, accountId: string, runId: string): Promise<void> {
  const rows = await execRows<{ run_id: string; node_id: string; seq: number; batch_id: string | null }>(
    db,
    sql`select b.run_id, b.node_id, b.seq, b.batch_id from ai_batches b
        where b.run_id = (select coalesce(r.chain_root_id, r.id) from runs r where r.id = ${runId})
          and b.account_id = ${accountId} and b.state in ('submitting', 'running')`,
  );
  if (rows.length === 0) return;
  const settings = await loadAiSettings(db, accountId);
  for (const row of rows) {
    let state: "cancelled" | "abandoned" = "abandoned";
    if (row.batch_id && settings) {
      try {
        await cancelProviderBatch(settings, row.batch_id, { timeoutMs: CANCEL_TIMEOUT_MS });
        state = "cancelled";
      } catch (error) {
        log.warn("could not cancel an AI batch at the provider", { runId, batchId: row.batch_id, error: classifyBatchError(error).message });
      }
    }
    await db.execute(sql`update ai_batches set state = ${state}, ended_at = now(), items = '[]'::jsonb
      where run_id = ${row.run_id} and node_id = ${row.node_id} and seq = ${row.seq} and state in ('submitting', 'running')`);
  }
}
