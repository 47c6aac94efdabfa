import { confinedWorkflowIds } from "@/lib/http/authorize";
import { ok, route } from "@/lib/http/route";
import { listAccountRunsQuery } from "@/lib/schemas/runs";
import { listAccountRuns } from "@/lib/services/runs/list-account-runs";

export const dynamic = "force-dynamic";

// GET /api/runs – the account's runs across workflows, newest first, with workflowName
export const GET = route({ auth: true, query: listAccountRunsQuery }, async ({ account, query }) => ok(await listAccountRuns(account.id, query, confinedWorkflowIds(account))));
