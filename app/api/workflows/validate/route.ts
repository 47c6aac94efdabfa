import { ok, route } from "@/lib/http/route";
import { validateGraphBody } from "@/lib/schemas/workflows";
import { validateWorkflowGraph } from "@/lib/services/workflows/validate-workflow-graph";

export const dynamic = "force-dynamic";

// POST /api/workflows/validate – check a graph without saving it
export const POST = route({ auth: true, body: validateGraphBody }, async ({ account, body }) =>
  ok(await validateWorkflowGraph(account.id, body.graph)));
