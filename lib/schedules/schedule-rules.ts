// The rules of a workflow schedule, client-safe so the editor shows the same readings and next times
// the server computes: croner parses the cron and walks time zones (DST included), cronstrue words it.
import { Cron } from "croner";
import cronstrue from "cronstrue";

export type Schedule = { cron: string; timezone: string; enabled: boolean };

/** One problem with a schedule: the field it is about and a sentence a person understands. */
export type ScheduleProblem = { path: "schedule.cron" | "schedule.timezone"; code: string; message: string };

const FIELD_NAMES = "minute, hour, day of month, month, day of week";

/** A valid IANA time zone name (as the runtime's ICU knows them), e.g. "Europe/Paris" or "UTC". */
function isTimeZone(zone: string): boolean {
  if (zone.trim() === "" || zone.length > 64) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function cronFor(schedule: Pick<Schedule, "cron" | "timezone">): Cron {
  // "5-part": 5 fields, seconds fixed at 0, so a schedule can never fire more than once a minute.
  return new Cron(schedule.cron.trim(), { timezone: schedule.timezone, mode: "5-part", paused: true });
}

/** Every problem of a schedule, or [] when it is valid. */
export function scheduleProblems(schedule: Pick<Schedule, "cron" | "timezone">): ScheduleProblem[] {
  const problems: ScheduleProblem[] = [];
  if (!isTimeZone(schedule.timezone)) {
    problems.push({
      path: "schedule.timezone",
      code: "invalid_timezone",
      message: `"${schedule.timezone}" is not a time zone: use an IANA name such as "UTC", "Europe/Paris" or "America/New_York".`,
    });
  }
  const cron = schedule.cron.trim();
  const fields = cron === "" ? [] : cron.split(/\s+/);
  if (cron.length > 200) {
    problems.push({ path: "schedule.cron", code: "invalid_cron", message: "The cron expression is too long (at most 200 characters)." });
  } else if (fields.length !== 5) {
    const what = fields.length === 6 ? "a sixth field (seconds) is not allowed: a schedule runs at most once a minute" : `it has ${fields.length}`;
    problems.push({
      path: "schedule.cron",
      code: "invalid_cron",
      message: `A cron expression has exactly 5 fields (${FIELD_NAMES}), such as "0 9 * * 1-5" for 09:00 every weekday; ${what}.`,
    });
  } else {
    try {
      const parsed = cronFor({ cron, timezone: problems.length ? "UTC" : schedule.timezone });
      if (!parsed.nextRun(new Date())) {
        problems.push({ path: "schedule.cron", code: "invalid_cron", message: `"${cron}" never matches a date (such as the 31st of February), so it would never run.` });
      }
    } catch (error) {
      problems.push({ path: "schedule.cron", code: "invalid_cron", message: `"${cron}" is not a valid cron expression: ${cronReason(error)}. Fields: ${FIELD_NAMES}.` });
    }
  }
  return problems;
}

/** croner's message without its "CronPattern:" prefix, as the end of a sentence. */
function cronReason(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/^Cron\w*:\s*/, "").replace(/\.$/, "");
}

/** The first `count` slots strictly after `from`. */
export function nextSlots(schedule: Pick<Schedule, "cron" | "timezone">, from: Date, count: number): Date[] {
  return cronFor(schedule).nextRuns(count, from);
}

/** The first slot strictly after `from`, or null when the cron never matches again. */
export function nextSlot(schedule: Pick<Schedule, "cron" | "timezone">, from: Date): Date | null {
  return cronFor(schedule).nextRun(from);
}

/** "At 09:00, Monday through Friday (Europe/Paris)": cronstrue's reading with the zone the times are in. */
export function describeSchedule(schedule: Pick<Schedule, "cron" | "timezone">): string {
  try {
    return `${cronstrue.toString(schedule.cron.trim(), { use24HourTimeFormat: true, verbose: false })} (${schedule.timezone})`;
  } catch {
    return "";
  }
}
