import { getDb } from "@/db/client";
import { getConfig } from "@/lib/config";
import { pruneExpired, staleRunningRuns, takeOverStaleRun, workflowsNeedingWake } from "@/lib/engine";
import { expireTusUploads } from "@/lib/services/uploads/expire-tus-uploads";
import { getInngest, runWakeEvent } from "@/lib/events/inngest";

/**
 * Under Inngest the heartbeat moves only when a step starts, and one step may legitimately take minutes (an AI call
 * with retries), while Inngest itself retries a step whose worker died: this sweep is only the backstop.
 */
const INNGEST_STALE_SECONDS = 600;

/** Every minute: wake workflows whose wake-up was lost, and resume runs whose executor stopped beating. */
export const sweepRunsFunction = getInngest().createFunction(
  { id: "sweep-runs", triggers: [{ cron: "* * * * *" }], retries: 1 },
  async ({ step }) => {
    const db = await getDb();
    const stale = await step.run("find-stale-runs", async () => {
      const taken: { workflowId: string; runId: string }[] = [];
      for (const run of await staleRunningRuns(db, INNGEST_STALE_SECONDS)) {
        if (await takeOverStaleRun(db, run.runId, INNGEST_STALE_SECONDS)) taken.push(run);
      }
      return taken;
    });
    const idle = await step.run("find-idle-queues", () => workflowsNeedingWake(db));
    // Resumable uploads: unfinished tus uploads expire after 24 h.
    await step.run("expire-tus-uploads", () => expireTusUploads());
    const events = [
      ...stale.map((r) => runWakeEvent.create({ workflowId: r.workflowId, resumeRunId: r.runId })),
      ...idle.map((workflowId) => runWakeEvent.create({ workflowId })),
    ];
    if (events.length > 0) await step.sendEvent("wake-workflows", events);
    // Retention housekeeping, bounded per call: every minute is often enough and cheap.
    const pruned = await step.run("prune-expired", () => pruneExpired(db, { retentionDays: getConfig().runOutputRetentionDays }));
    return { resumed: stale.length, woken: idle.length, pruned };
  },
);
