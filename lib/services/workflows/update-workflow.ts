import "server-only";
import { eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { workflows, workflowVersions } from "@/db/schema";
import { nowDate } from "@/lib/clock";
import { assertScheduleAllowed } from "@/lib/services/schedules/schedule-cap";
import { scheduleColumns, type ScheduleInput } from "@/lib/services/schedules/schedule-columns";
import { assertValidGraph } from "./check-graph";
import { findOwnWorkflow } from "./get-workflow";
import { canonicalJson, toWorkflowView, type WorkflowView } from "./workflow-view";

/**
 * PATCH: a new name and/or graph. The version goes up only when the graph really changes (key order aside),
 * and each version is kept in `workflow_versions`, so a run can always name the graph it executed.
 */
export async function updateWorkflow(
  accountId: string,
  workflowId: string,
  input: { name?: string; graph?: unknown; schedule?: ScheduleInput },
): Promise<WorkflowView> {
  const db = await getDb();
  await findOwnWorkflow(db, accountId, workflowId); // 404 before a 422 about a graph for a workflow that is not there
  if (input.graph !== undefined) await assertValidGraph(db, accountId, input.graph);
  const newSchedule = input.schedule === undefined ? undefined : scheduleColumns(input.schedule, nowDate());
  return db.transaction(async (tx) => {
    const current = await findOwnWorkflow(tx, accountId, workflowId, { forUpdate: true });
    const graphChanged = input.graph !== undefined && canonicalJson(input.graph) !== canonicalJson(current.graph);
    const nameChanged = input.name !== undefined && input.name !== current.name;
    // An unchanged schedule keeps its next slot (saving at 09:00:00.2 must not skip the 09:00 slot).
    const schedule = newSchedule && canonicalJson(newSchedule.schedule) !== canonicalJson(current.schedule) ? newSchedule : undefined;
    if (!graphChanged && !nameChanged && !schedule) return toWorkflowView(current);
    if (schedule?.schedule && !current.schedule) await assertScheduleAllowed(tx, accountId, workflowId);
    const next = {
      name: input.name ?? current.name,
      graph: graphChanged ? input.graph : current.graph,
      version: graphChanged ? current.version + 1 : current.version,
      updatedAt: new Date(),
      ...schedule,
    };
    await tx.update(workflows).set(next).where(eq(workflows.id, workflowId));
    if (graphChanged) {
      await tx.insert(workflowVersions).values({ workflowId, version: next.version, name: next.name, graph: next.graph, createdAt: next.updatedAt });
    }
    return toWorkflowView({ ...current, ...next });
  });
}
