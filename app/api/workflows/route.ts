import { confinedWorkflowIds } from "@/lib/http/authorize";
import { created, ok, route } from "@/lib/http/route";
import { createWorkflowBody, listWorkflowsQuery } from "@/lib/schemas/workflows";
import { createWorkflow } from "@/lib/services/workflows/create-workflow";
import { listWorkflows } from "@/lib/services/workflows/list-workflows";

export const dynamic = "force-dynamic";

// POST /api/workflows – create a workflow (422 invalid_graph lists every problem)
export const POST = route({ auth: true, body: createWorkflowBody }, async ({ account, body }) =>
  created(await createWorkflow(account.id, body)));

// GET /api/workflows – the account's workflows, most recently updated first
export const GET = route({ auth: true, query: listWorkflowsQuery }, async ({ account, query }) =>
  ok(await listWorkflows(account.id, query, confinedWorkflowIds(account))));
