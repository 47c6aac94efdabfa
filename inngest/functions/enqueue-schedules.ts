import { getDb } from "@/db/client";
import { nowDate } from "@/lib/clock";
import { enqueueDueSlots } from "@/lib/engine";
import { getInngest, runWakeEvent } from "@/lib/events/inngest";

/**
 * Every minute under Inngest: the same "enqueue due slots" service the embedded executor's sweep calls.
 * The slot claim lives in PostgreSQL, so a retried or duplicated invocation never enqueues a slot twice; the wake-ups
 * go out as events after the step, so a retry of the step does not send them twice either.
 */
export const enqueueSchedulesFunction = getInngest().createFunction(
  { id: "enqueue-schedules", triggers: [{ cron: "* * * * *" }], retries: 2 },
  async ({ step }) => {
    const due = await step.run("enqueue-due-slots", async () => {
      const woken: string[] = [];
      const result = await enqueueDueSlots(await getDb(), nowDate(), (workflowId) => woken.push(workflowId));
      return { enqueued: result.enqueued, skipped: result.skipped, woken };
    });
    if (due.woken.length > 0) {
      await step.sendEvent("wake-workflows", due.woken.map((workflowId) => runWakeEvent.create({ workflowId })));
    }
    return { enqueued: due.enqueued, skipped: due.skipped };
  },
);
