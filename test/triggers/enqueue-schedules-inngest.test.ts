/**
 * The Inngest cron function `enqueue-schedules`, executed by @inngest/test (its step bodies really run against the
 * test database): it enqueues the due slot once, sends one wake-up per enqueued run, and a second invocation for the
 * same minute (a retry, or Inngest delivering the cron twice) enqueues nothing.
 */
import { InngestTestEngine, mockCtx } from "@inngest/test";
import { eq, sql } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { execRows, getDb } from "@/db/client";
import { workflows } from "@/db/schema";
import { functions } from "@/inngest/functions";
import { enqueueSchedulesFunction } from "@/inngest/functions/enqueue-schedules";
import { setClock } from "@/lib/clock";
import { createTestAccount } from "@/test/support/accounts";
import { insertWorkflow, trigger } from "@/test/runs/helpers";

afterEach(() => setClock());

function engineRecordingEvents() {
  const sendEvent = vi.fn(async () => ({ ids: [] as string[] }));
  const engine = new InngestTestEngine({
    function: enqueueSchedulesFunction,
    // No Inngest server here: record the wake-up events instead of sending them.
    transformCtx: (raw) => {
      const ctx = mockCtx(raw);
      (ctx.step as unknown as { sendEvent: typeof sendEvent }).sendEvent = sendEvent;
      return ctx;
    },
  });
  return { engine, sendEvent };
}

async function scheduledWorkflow(nextAt: string): Promise<string> {
  const { id } = await createTestAccount();
  const workflowId = await insertWorkflow(id, {
    nodes: [trigger, { id: "out", type: "OUTPUT", data: { forEach: "{{t.body}}", to: "{{item}}", subject: "s", body: "b" } }],
    edges: [{ source: "t", target: "out" }],
  });
  const db = await getDb();
  await db
    .update(workflows)
    .set({ schedule: { cron: "*/5 * * * *", timezone: "UTC", enabled: true }, scheduleNextAt: new Date(nextAt) })
    .where(eq(workflows.id, workflowId));
  return workflowId;
}

describe("the Inngest cron function enqueue-schedules", () => {
  it("is served, on a cron of every minute", () => {
    expect(functions.map((f) => f.id())).toContain("enqueue-schedules");
    expect(JSON.stringify(enqueueSchedulesFunction["opts"])).toContain('"cron":"* * * * *"');
  });

  it("enqueues each due slot once and wakes its workflow; a second invocation in the same minute does nothing", async () => {
    const workflowId = await scheduledWorkflow("2026-11-24T17:05:00.000Z");
    setClock(() => Date.parse("2026-11-24T17:05:02.000Z"));

    const first = engineRecordingEvents();
    const { result } = await first.engine.execute();
    const { enqueued } = result as { enqueued: { workflowId: string; slotAt: string; runId: string }[]; skipped: number };
    const mine = enqueued.filter((e) => e.workflowId === workflowId);
    expect(mine.map((e) => e.slotAt)).toEqual(["2026-11-24T17:05:00.000Z"]);
    expect(first.sendEvent).toHaveBeenCalledTimes(1);
    const events = (first.sendEvent.mock.calls[0] as unknown as [string, { name: string; data: { workflowId: string } }[]])[1];
    expect(events).toContainEqual(expect.objectContaining({ name: "flowmail/run.wake", data: { workflowId } }));

    const second = engineRecordingEvents();
    const again = (await second.engine.execute()).result as { enqueued: { workflowId: string }[] };
    expect(again.enqueued.filter((e) => e.workflowId === workflowId)).toEqual([]);
    expect(second.sendEvent).not.toHaveBeenCalled();

    const runs = await execRows<{ id: string; trigger: string; status: string }>(
      await getDb(),
      sql`select id, trigger, status from runs where workflow_id = ${workflowId}`,
    );
    expect(runs).toEqual([{ id: mine[0].runId, trigger: "schedule", status: "PENDING" }]);
    const [row] = await execRows<{ next: string | Date }>(await getDb(), sql`select schedule_next_at as next from workflows where id = ${workflowId}`);
    expect(new Date(row.next).toISOString()).toBe("2026-11-24T17:10:00.000Z");
  });
});
