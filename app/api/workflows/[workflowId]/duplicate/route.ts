import { created, route } from "@/lib/http/route";
import { workflowIdParams } from "@/lib/schemas/workflows";
import { duplicateWorkflow } from "@/lib/services/workflows/duplicate-workflow";

export const dynamic = "force-dynamic";

// POST /api/workflows/:workflowId/duplicate – a copy named "Copy of <name>" (version 1, no schedule, no hooks)
export const POST = route({ auth: true, params: workflowIdParams }, async ({ account, params }) =>
  created(await duplicateWorkflow(account.id, params.workflowId)));
