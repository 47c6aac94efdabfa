/**
 * Workflow schedules (CONTRACT 13) through the real route handlers, and the "enqueue due slots" service with a driven
 * clock: validation sentences (422 invalid_schedule), nextRunAt, exactly one run per slot under concurrent sweeps,
 * missed slots skipped.
 */
import { sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { execRows, getDb } from "@/db/client";
import * as workflowsRoute from "@/app/api/workflows/route";
import * as workflowRoute from "@/app/api/workflows/[workflowId]/route";
import { setClock } from "@/lib/clock";
import { enqueueDueSlots, SLOT_GRACE_MS } from "@/lib/engine/pg/enqueue-due-slots";
import { nextRunAt } from "@/lib/services/schedules/schedule-columns";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";
import { getRun, startTestExecutor, stopTestExecutor } from "@/test/runs/helpers";

type Account = Awaited<ReturnType<typeof createTestAccount>>;

const graph = {
  nodes: [
    { id: "start", type: "TRIGGER", data: {} },
    { id: "mail", type: "OUTPUT", data: { forEach: "{{start.body.list}}", to: "{{item}}", subject: "s", body: "b" } },
  ],
  edges: [{ source: "start", target: "mail" }],
};

let alice: Account;
const at = (iso: string) => new Date(iso);
const useTime = (iso: string) => setClock(() => Date.parse(iso));

beforeAll(async () => {
  alice = await createTestAccount();
});

afterEach(() => setClock());

afterAll(async () => {
  await stopTestExecutor();
});

async function create(schedule: unknown, token = alice.token) {
  return call(workflowsRoute.POST, { json: { name: "Scheduled", graph, schedule }, token });
}

async function patch(workflowId: string, body: unknown) {
  return call(workflowRoute.PATCH, { method: "PATCH", path: `/api/workflows/${workflowId}`, params: { workflowId }, json: body, token: alice.token });
}

async function scheduleRuns(workflowId: string) {
  return execRows<{ id: string; trigger: string; slot_at: string | Date }>(
    await getDb(),
    sql`select r.id, r.trigger, s.slot_at from runs r join schedule_slots s on s.run_id = r.id where r.workflow_id = ${workflowId} order by s.slot_at`,
  );
}

const noWake = () => {};

describe("the schedule field", () => {
  it("is stored with defaults (UTC, enabled) and shows nextRunAt in the schedule's time zone", async () => {
    useTime("2026-11-24T16:00:00.000Z"); // a Tuesday
    const paris = await create({ cron: "0 9 * * 1-5", timezone: "Europe/Paris" });
    expect(paris.status, paris.text).toBe(201);
    expect(paris.body.schedule).toEqual({ cron: "0 9 * * 1-5", timezone: "Europe/Paris", enabled: true });
    expect(paris.body.nextRunAt).toBe("2026-11-25T08:00:00.000Z"); // 09:00 in Paris (UTC+1 in November)
    const utc = await create({ cron: "*/15 * * * *" });
    expect(utc.body.schedule).toEqual({ cron: "*/15 * * * *", timezone: "UTC", enabled: true });
    expect(utc.body.nextRunAt).toBe("2026-11-24T16:15:00.000Z");
    const none = await create(undefined);
    expect(none.body.schedule).toBeNull();
    expect(none.body.nextRunAt).toBeNull();
    const got = await call(workflowRoute.GET, { path: `/api/workflows/${paris.body.id}`, params: { workflowId: paris.body.id }, token: alice.token });
    expect(got.body.schedule).toEqual(paris.body.schedule);
    expect(got.body.nextRunAt).toBe("2026-11-25T08:00:00.000Z");
  });

  it.each([
    ["* * * * * *", "schedule.cron", /exactly 5 fields.*sixth field \(seconds\)/],
    ["0 9 * *", "schedule.cron", /exactly 5 fields.*it has 4/],
    ["", "schedule.cron", /exactly 5 fields/],
    ["61 * * * *", "schedule.cron", /"61 \* \* \* \*" is not a valid cron expression: .*minute/],
    ["0 0 31 2 *", "schedule.cron", /never matches a date/],
    ["@daily", "schedule.cron", /exactly 5 fields/],
  ])("refuses cron %j with 422 invalid_schedule and a sentence (nothing stored)", async (cron, path, message) => {
    const before = await execRows<{ n: number }>(await getDb(), sql`select count(*)::int as n from workflows`);
    const res = await create({ cron });
    expect(res.status, res.text).toBe(422);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.body.code).toBe("invalid_schedule");
    expect(res.body.detail).toMatch(message);
    expect(res.body.errors).toEqual([expect.objectContaining({ path, code: "invalid_cron" })]);
    const after = await execRows<{ n: number }>(await getDb(), sql`select count(*)::int as n from workflows`);
    expect(after[0].n).toBe(before[0].n);
  });

  it("refuses an unknown time zone, and a malformed schedule object with validation_failed", async () => {
    const zone = await create({ cron: "0 9 * * *", timezone: "Mars/Olympus" });
    expect(zone.status).toBe(422);
    expect(zone.body.code).toBe("invalid_schedule");
    expect(zone.body.errors).toEqual([expect.objectContaining({ path: "schedule.timezone", code: "invalid_timezone" })]);
    expect(zone.body.detail).toContain('"Mars/Olympus" is not a time zone');
    const typo = await create({ cron: "0 9 * * *", timeZone: "UTC" });
    expect(typo.status).toBe(422);
    expect(typo.body.code).toBe("validation_failed");
    expect(typo.body.errors[0].path).toBe("schedule.timeZone");
    expect((await create({ cron: 5 })).body.code).toBe("validation_failed");
    expect((await create("0 9 * * *")).body.code).toBe("validation_failed");
  });

  it("nextRunAt names the slot the workflow stored (the one the sweep runs), unless it is past the grace window", () => {
    // A PATCH that straddles a slot: its schedule stored at 16:00:59.900 (next slot 16:01), its answer built after 16:01.
    const schedule = { cron: "* * * * *", timezone: "UTC", enabled: true };
    const after = new Date("2026-11-24T16:01:00.100Z");
    expect(nextRunAt(schedule, after, new Date("2026-11-24T16:01:00.000Z"))).toBe("2026-11-24T16:01:00.000Z");
    expect(nextRunAt(schedule, after, null)).toBe("2026-11-24T16:02:00.000Z");
    // A stored slot older than SLOT_GRACE_MS is skipped as missed: the next one after now is shown.
    expect(nextRunAt(schedule, after, new Date(after.getTime() - SLOT_GRACE_MS - 1))).toBe("2026-11-24T16:02:00.000Z");
    expect(nextRunAt({ ...schedule, enabled: false }, after, new Date("2026-11-24T16:01:00.000Z"))).toBeNull();
  });

  it("is set, disabled, changed and removed with PATCH; an invalid one changes nothing", async () => {
    useTime("2026-11-24T16:00:30.000Z");
    const wf = (await create(undefined)).body;
    const set = await patch(wf.id, { schedule: { cron: "* * * * *" } });
    expect(set.status).toBe(200);
    expect(set.body.nextRunAt).toBe("2026-11-24T16:01:00.000Z");
    expect(set.body.version).toBe(1); // the schedule is not part of the graph's versions
    const bad = await patch(wf.id, { name: "Renamed", schedule: { cron: "* * * * * *" } });
    expect(bad.status).toBe(422);
    const unchanged = await call(workflowRoute.GET, { path: `/api/workflows/${wf.id}`, params: { workflowId: wf.id }, token: alice.token });
    expect(unchanged.body.name).toBe("Scheduled");
    expect(unchanged.body.schedule.cron).toBe("* * * * *");
    const disabled = await patch(wf.id, { schedule: { cron: "* * * * *", enabled: false } });
    expect(disabled.body.schedule.enabled).toBe(false);
    expect(disabled.body.nextRunAt).toBeNull();
    const cleared = await patch(wf.id, { schedule: null });
    expect(cleared.body.schedule).toBeNull();
    expect(cleared.body.nextRunAt).toBeNull();
    const [row] = await execRows<{ schedule_next_at: unknown }>(await getDb(), sql`select schedule_next_at from workflows where id = ${wf.id}`);
    expect(row.schedule_next_at).toBeNull();
  });
});

describe("enqueueDueSlots", () => {
  it("enqueues exactly one run per due slot, even with several sweeps at once, and nothing before it is due", async () => {
    useTime("2026-11-24T16:00:30.000Z");
    const wf = (await create({ cron: "* * * * *" })).body;
    const db = await getDb();
    expect((await enqueueDueSlots(db, at("2026-11-24T16:00:59.999Z"), noWake)).enqueued.filter((e) => e.workflowId === wf.id)).toEqual([]);
    const woken: string[] = [];
    const sweeps = await Promise.all(Array.from({ length: 6 }, () => enqueueDueSlots(db, at("2026-11-24T16:01:00.200Z"), (id) => woken.push(id))));
    const mine = sweeps.flatMap((s) => s.enqueued).filter((e) => e.workflowId === wf.id);
    expect(mine).toHaveLength(1);
    expect(mine[0].slotAt).toBe("2026-11-24T16:01:00.000Z");
    expect(woken.filter((id) => id === wf.id)).toHaveLength(1);
    // Later sweeps within the same minute (this instance or another) find nothing to do.
    expect((await enqueueDueSlots(db, at("2026-11-24T16:01:30.000Z"), noWake)).enqueued.filter((e) => e.workflowId === wf.id)).toEqual([]);
    const runs = await scheduleRuns(wf.id);
    expect(runs.map((r) => [r.trigger, new Date(r.slot_at).toISOString()])).toEqual([["schedule", "2026-11-24T16:01:00.000Z"]]);
  });

  it("skips slots missed while nothing ran: after a gap only the latest slot runs, and a stale daily slot not at all", async () => {
    useTime("2026-11-24T16:00:30.000Z");
    const minutely = (await create({ cron: "* * * * *" })).body;
    const daily = (await create({ cron: "0 16 * * *" })).body; // next: 2026-11-25T16:00Z
    const db = await getDb();
    const gap = await enqueueDueSlots(db, at("2026-11-24T16:30:10.000Z"), noWake);
    expect(gap.enqueued.filter((e) => e.workflowId === minutely.id).map((e) => e.slotAt)).toEqual(["2026-11-24T16:30:00.000Z"]);
    expect(gap.skipped).toBeGreaterThanOrEqual(29); // 16:01 … 16:29
    // Nothing ran on 25 November around 16:00; on the 26th at 16:05 the 25th's slot is long gone (and the 26th's past the grace).
    const late = await enqueueDueSlots(db, at("2026-11-26T16:05:00.000Z"), noWake);
    expect(late.enqueued.filter((e) => e.workflowId === daily.id)).toEqual([]);
    expect(await scheduleRuns(daily.id)).toEqual([]);
    const [row] = await execRows<{ next: string | Date }>(db, sql`select schedule_next_at as next from workflows where id = ${daily.id}`);
    expect(new Date(row.next).toISOString()).toBe("2026-11-27T16:00:00.000Z");
    // A slot seen within the grace window still runs (an instance that starts 90 s after 16:00).
    const onTime = await enqueueDueSlots(db, at("2026-11-27T16:01:30.000Z"), noWake);
    expect(onTime.enqueued.filter((e) => e.workflowId === daily.id).map((e) => e.slotAt)).toEqual(["2026-11-27T16:00:00.000Z"]);
  });

  it("never enqueues for a disabled schedule or a deleted workflow", async () => {
    useTime("2026-11-24T16:00:30.000Z");
    const off = (await create({ cron: "* * * * *", enabled: false })).body;
    const gone = (await create({ cron: "* * * * *" })).body;
    await call(workflowRoute.DELETE, { method: "DELETE", path: `/api/workflows/${gone.id}`, params: { workflowId: gone.id }, token: alice.token });
    const result = await enqueueDueSlots(await getDb(), at("2026-11-24T16:01:00.500Z"), noWake);
    expect(result.enqueued.map((e) => e.workflowId)).not.toContain(off.id);
    expect(result.enqueued.map((e) => e.workflowId)).not.toContain(gone.id);
  });

  it("a scheduled run executes with trigger schedule and an empty TRIGGER output", async () => {
    const executor = startTestExecutor(2);
    useTime("2026-11-24T16:00:30.000Z");
    const wf = (await create({ cron: "* * * * *" })).body;
    const poked: string[] = [];
    const { enqueued } = await enqueueDueSlots(await getDb(), at("2026-11-24T16:01:01.000Z"), (id) => {
      poked.push(id);
      executor.poke(id);
    });
    const mine = enqueued.find((e) => e.workflowId === wf.id)!;
    expect(poked).toContain(wf.id);
    await executor.idle();
    const run = (await getRun(alice.token, mine.runId)).body;
    expect(run.nodes.start).toMatchObject({ status: "SUCCESS", output: {} });
    // The graph reads {{start.body.list}}, which only a hook delivery provides: a clear node error.
    expect(run.status).toBe("FAILED");
    expect(run.nodes.mail.error).toContain("{{start.body.list}}");
    const [row] = await execRows<{ trigger: string }>(await getDb(), sql`select trigger from runs where id = ${mine.runId}`);
    expect(row.trigger).toBe("schedule");
  });
});
