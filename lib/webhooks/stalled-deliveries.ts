import "server-only";
import { and, asc, eq, lt } from "drizzle-orm";
import type { Db } from "@/db/client";
import { webhookDeliveries } from "@/db/schema";

/** A pending delivery this long past its due time has no function run behind it any more. */
export const STALLED_AFTER_MS = 15 * 60 * 1000;

/** Pending deliveries overdue by STALLED_AFTER_MS (oldest first, at most `limit`). */
export async function stalledDeliveries(db: Db, now = new Date(), limit = 100): Promise<{ id: string; attempts: number }[]> {
  return db
    .select({ id: webhookDeliveries.id, attempts: webhookDeliveries.attempts })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.status, "pending"),
        lt(webhookDeliveries.nextAttemptAt, new Date(now.getTime() - STALLED_AFTER_MS)),
      ),
    )
    .orderBy(asc(webhookDeliveries.nextAttemptAt))
    .limit(limit);
}
