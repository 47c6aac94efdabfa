import "server-only";
import { getDb } from "@/db/client";
import { workflows, workflowVersions } from "@/db/schema";
import { nowDate } from "@/lib/clock";
import { newId } from "@/lib/ids";
import { assertScheduleAllowed } from "@/lib/services/schedules/schedule-cap";
import { scheduleColumns, type ScheduleInput } from "@/lib/services/schedules/schedule-columns";
import { assertValidGraph } from "./check-graph";
import { toWorkflowView, type WorkflowView } from "./workflow-view";

/** Validates the graph (every problem, nothing stored on failure), then stores the workflow and its version 1. */
export async function createWorkflow(accountId: string, input: { name: string; graph: unknown; schedule?: ScheduleInput }): Promise<WorkflowView> {
  const db = await getDb();
  await assertValidGraph(db, accountId, input.graph);
  if (input.schedule) await assertScheduleAllowed(db, accountId);
  const now = new Date();
  const row = { id: newId("wf"), accountId, name: input.name, graph: input.graph, version: 1, createdAt: now, updatedAt: now, ...scheduleColumns(input.schedule ?? null, nowDate()) };
  await db.transaction(async (tx) => {
    await tx.insert(workflows).values(row);
    await tx.insert(workflowVersions).values({ workflowId: row.id, version: 1, name: row.name, graph: row.graph, createdAt: now });
  });
  return toWorkflowView(row);
}
