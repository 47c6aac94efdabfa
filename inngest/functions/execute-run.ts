import { getBackgroundDb, getRunStateDb } from "@/db/client";
import { claimAndExecute, executeRun, pgEngineDeps, wakeWorkflow } from "@/lib/engine";
import { inngestStep, type InngestSteps } from "@/lib/engine/drivers/inngest-steps";
import { getInngest, runWakeEvent } from "@/lib/events/inngest";

/**
 * One invocation claims (or resumes) one run of the workflow and executes it, each node a durable step; a node that
 * waits for an outside service (an AI provider's batch) sleeps between its steps instead of holding the invocation.
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
    // Node steps are Inngest steps; a batch step that waits for minutes sleeps between its runs (inngest-steps.ts).
    const steps = inngestStep(step as unknown as InngestSteps);
    const { workflowId, resumeRunId } = event.data as { workflowId: string; resumeRunId?: string };
    if (resumeRunId) {
      await executeRun(steps, deps, resumeRunId);
      return { runId: resumeRunId, resumed: true };
    }
    const runId = await claimAndExecute(steps, deps, workflowId);
    return { runId };
  },
);
