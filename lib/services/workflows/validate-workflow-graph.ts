import "server-only";
import { getDb } from "@/db/client";
import { checkGraph } from "./check-graph";

/** POST /api/workflows/validate: the same checks as saving, answered as a verdict instead of a 422. */
export async function validateWorkflowGraph(accountId: string, graph: unknown) {
  return checkGraph(await getDb(), accountId, graph);
}
