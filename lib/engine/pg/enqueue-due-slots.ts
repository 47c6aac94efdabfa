import "server-only";
import { sql } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import { getConfig } from "@/lib/config";
import { newId } from "@/lib/ids";
import { log } from "@/lib/log";
import { consumeRateLimit } from "@/lib/rate-limit";
import { nextSlot, nextSlots, type Schedule } from "@/lib/schedules/schedule-rules";

/**
 * How late a slot may still be enqueued. A slot is "missed" (skipped, never run late) when no sweep saw it within
 * this window: the embedded sweep looks every 5 s and the Inngest cron function every minute, so a slot is missed
 * only when no instance was running around its time. Two minutes tolerate one late Inngest cron invocation.
 */
export const SLOT_GRACE_MS = 2 * 60 * 1000;

/** Workflows handled per call; the rest are found by the next sweep a few seconds later. */
const BATCH = 200;

export type EnqueuedSlot = { workflowId: string; slotAt: string; runId: string };
export type DueSlotsResult = { enqueued: EnqueuedSlot[]; skipped: number };

type DueRow = { id: string; account_id: string; schedule: Schedule; schedule_next_at: string | Date };

/**
 * The one "enqueue due slots" service, called by the embedded executor's sweep and by the Inngest cron
 * function with the current time. For each workflow whose next slot is due it enqueues at most one run, for the
 * latest slot within SLOT_GRACE_MS of `now` (older due slots were missed while nothing ran: skipped), and moves the
 * workflow's next slot past `now`.
 *
 * Exactly once per slot, across instances and restarts: the run is inserted by the same statement that inserts the
 * (workflow, slot) row of `schedule_slots`, and only when that row is new (its primary key is the guard). The next
 * slot is moved with a compare-and-set, so a concurrent sweep of another instance simply finds nothing to do.
 */
export async function enqueueDueSlots(db: Db, now: Date, wake: (workflowId: string) => void): Promise<DueSlotsResult> {
  const due = await execRows<DueRow>(
    db,
    sql`select id, account_id, schedule, schedule_next_at from workflows
        where schedule_next_at <= ${now.toISOString()}::timestamptz and deleted_at is null
        order by schedule_next_at limit ${BATCH}`,
  );
  const result: DueSlotsResult = { enqueued: [], skipped: 0 };
  for (const row of due) {
    try {
      const outcome = await handleDueWorkflow(db, row, now);
      if (outcome.skipped) result.skipped += outcome.skipped;
      if (outcome.enqueued) {
        result.enqueued.push(outcome.enqueued);
        wake(row.id);
      }
    } catch (error) {
      // One broken schedule (say, a time zone the runtime no longer knows) must not stop the others.
      log.error("schedule slot not enqueued", { workflowId: row.id, error });
    }
  }
  return result;
}

async function handleDueWorkflow(db: Db, row: DueRow, now: Date): Promise<{ enqueued?: EnqueuedSlot; skipped?: number }> {
  const dueAt = new Date(row.schedule_next_at);
  const following = nextSlot(row.schedule, now);
  let slot = latestSlot(row.schedule, dueAt, now);
  let skipped = countMissed(row.schedule, dueAt, slot ?? now);
  // A scheduled run counts against the account's run rate limit like any other: over it, the slot is skipped (the
  // schedule moves on) rather than queued, so schedules cannot get around the limit.
  const hit = slot ? await consumeRateLimit(`run:${row.account_id}`, getConfig().runRateLimitPerMinute, 60, now.getTime()) : null;
  if (hit && !hit.allowed) {
    log.warn("scheduled run skipped: the account is over its run rate limit", { workflowId: row.id, slotAt: slot!.toISOString() });
    slot = null;
    skipped += 1;
  }
  if (skipped > 0) log.warn("schedule slots missed while nothing ran were skipped", { workflowId: row.id, skipped, dueAt: dueAt.toISOString() });
  const runId = newId("run");
  // One statement: move the next slot (compare-and-set), claim the slot, snapshot the workflow into a run.
  const [inserted] = await execRows<{ id: string }>(
    db,
    sql`with moved as (
          update workflows set schedule_next_at = ${following ? following.toISOString() : null}::timestamptz
          where id = ${row.id} and schedule_next_at = ${dueAt.toISOString()}::timestamptz
          returning id
        ), slot as (
          insert into schedule_slots (workflow_id, slot_at, run_id)
          select id, ${slot ? slot.toISOString() : null}::timestamptz, ${runId} from moved where ${slot !== null}
          on conflict do nothing
          returning workflow_id
        )
        insert into runs (id, workflow_id, account_id, workflow_version, graph, trigger)
        select ${runId}, w.id, w.account_id, w.version, w.graph, 'schedule'
        from workflows w join slot on slot.workflow_id = w.id
        where w.deleted_at is null
        returning id`,
  );
  if (!inserted || !slot) {
    if (hit?.allowed) await hit.refund(); // another instance enqueued this slot: no run was added here
    return { skipped };
  }
  return { enqueued: { workflowId: row.id, slotAt: slot.toISOString(), runId }, skipped };
}

/** The latest slot in [max(dueAt, now − grace), now], or null when every due slot is older than the grace window. */
function latestSlot(schedule: Schedule, dueAt: Date, now: Date): Date | null {
  const windowStart = Math.max(dueAt.getTime(), now.getTime() - SLOT_GRACE_MS);
  // nextRuns is strictly after its argument: start 1 ms before the window so a slot exactly at its start counts.
  const candidates = nextSlots(schedule, new Date(windowStart - 1), 3).filter((d) => d.getTime() <= now.getTime());
  return candidates.at(-1) ?? null;
}

/** Due slots before `until` that will never run (capped: the count is only for the log). */
function countMissed(schedule: Schedule, dueAt: Date, until: Date): number {
  const missed = nextSlots(schedule, new Date(dueAt.getTime() - 1), 100).filter((d) => d.getTime() < until.getTime());
  return missed.length;
}
