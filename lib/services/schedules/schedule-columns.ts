import "server-only";
import { AppError } from "@/lib/errors";
import { SLOT_GRACE_MS } from "@/lib/engine";
import { nextSlot, scheduleProblems, type Schedule } from "@/lib/schedules/schedule-rules";

export type ScheduleInput = { cron: string; timezone?: string; enabled?: boolean } | null;

/**
 * The workflow columns for a schedule given in POST or PATCH /api/workflows, or 422 `invalid_schedule` listing every
 * problem. The first slot is the first one strictly after `now`: a schedule saved at 09:00:30 for "every minute"
 * first runs at 09:01, never for a slot that already passed.
 */
export function scheduleColumns(input: ScheduleInput, now: Date): { schedule: Schedule | null; scheduleNextAt: Date | null } {
  if (input === null) return { schedule: null, scheduleNextAt: null };
  const schedule: Schedule = { cron: input.cron.trim().replace(/\s+/g, " "), timezone: (input.timezone ?? "UTC").trim(), enabled: input.enabled ?? true };
  const problems = scheduleProblems(schedule);
  if (problems.length > 0) {
    throw new AppError("invalid_schedule", problems.map((p) => p.message).join(" "), { errors: problems });
  }
  return { schedule, scheduleNextAt: schedule.enabled ? nextSlot(schedule, now) : null };
}

/**
 * `nextRunAt` of the workflow view: the slot the sweep will run next — the stored next slot (`storedNextAt`, the
 * workflow's schedule_next_at) unless it is older than SLOT_GRACE_MS (then it is skipped as missed), else the next slot
 * after now; null without an enabled schedule. A PATCH that straddles a slot (its schedule saved at 09:00:59.9, its
 * answer built at 09:01:00.1) thus names the 09:01 slot it stored, which runs, and not 09:02.
 */
export function nextRunAt(schedule: Schedule | null | undefined, now: Date, storedNextAt?: Date | null): string | null {
  if (!schedule?.enabled) return null;
  if (storedNextAt && storedNextAt.getTime() >= now.getTime() - SLOT_GRACE_MS) return storedNextAt.toISOString();
  try {
    return nextSlot(schedule, now)?.toISOString() ?? null;
  } catch {
    return null;
  }
}
