import type { workflows } from "@/db/schema";
import { nowDate } from "@/lib/clock";
import { nextRunAt } from "@/lib/services/schedules/schedule-columns";

type WorkflowRow = typeof workflows.$inferSelect;

/** The API shape of a workflow. */
export function toWorkflowView(row: Pick<WorkflowRow, "id" | "name" | "graph" | "version" | "createdAt" | "updatedAt"> & Partial<Pick<WorkflowRow, "schedule" | "scheduleNextAt">>) {
  return {
    id: row.id,
    name: row.name,
    graph: row.graph,
    version: row.version,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    schedule: row.schedule ?? null,
    nextRunAt: nextRunAt(row.schedule, nowDate(), row.scheduleNextAt),
  };
}

export type WorkflowView = ReturnType<typeof toWorkflowView>;

/** JSON with object keys sorted: jsonb reorders keys, so "did the graph change" compares this form. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  const out: [string, unknown][] = Object.keys(value)
    .sort()
    .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]);
  return Object.fromEntries(out);
}
