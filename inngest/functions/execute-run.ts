import { getBackgroundDb, getRunStateDb } from "@/db/client";
import { claimAndExecute, executeRun, pgEngineDeps, wakeWorkflow, type Step } from "@/lib/engine";
import { getInngest, runWakeEvent } from "@/lib/events/inngest";

/**
 * One invocation claims (or resumes) one run of the workflow and executes it, each node a durable step.
 * The concurrency key keeps one invocation per workflow at a time; Postgres's claim decides which run goes next.
 */
export const executeRunFunction = getInngest().createFunction(
  {
    id: "execute-run",
    triggers: [runWakeEvent],
    concurrency: { key: "event.data.workflowId", limit: 1 },
    retries: 4,
  },
  async ({ event, step }) => {
    const db = await getBackgroundDb();
    const deps = pgEngineDeps(db, wakeWorkflow, await getRunStateDb());
    const steps = step as unknown as Step;
    const { workflowId, resumeRunId } = event.data as { workflowId: string; resumeRunId?: string };
    if (resumeRunId) {
      await executeRun(steps, deps, resumeRunId);
      return { runId: resumeRunId, resumed: true };
    }
    const runId = await claimAndExecute(steps, deps, workflowId);
    return { runId };
  },
);
