import "server-only";
import { sql } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";

/**
 * The queue as every instance sees it: how many runs are PENDING and how long the oldest has waited. One statement over
 * the partial index of PENDING runs (runs_pending_idx): its cost follows the queue's length, not the run history's.
 */
export async function readQueueGauges(db: Db): Promise<{ pending: number; oldestSeconds: number }> {
  const [row] = await execRows<{ pending: string | number; oldest: string | number | null }>(
    db,
    sql`select count(*) as pending, extract(epoch from (now() - min(enqueued_at))) as oldest
        from runs where status = 'PENDING'`,
  );
  return { pending: Number(row?.pending ?? 0), oldestSeconds: Math.max(0, Number(row?.oldest ?? 0)) };
}
