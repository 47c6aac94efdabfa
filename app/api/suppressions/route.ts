import { ok, route } from "@/lib/http/route";
import { addSuppressionsBody, suppressionsQuery } from "@/lib/schemas/sending";
import { addSuppressions } from "@/lib/services/suppressions/add-suppressions";
import { listSuppressions } from "@/lib/services/suppressions/list-suppressions";

export const dynamic = "force-dynamic";

// GET /api/suppressions – the account's suppression list, newest first
export const GET = route({ auth: true, query: suppressionsQuery }, async ({ account, query }) => ok(await listSuppressions(account.id, query)));

// POST /api/suppressions – add addresses by hand (reason "manual")
export const POST = route({ auth: true, body: addSuppressionsBody }, async ({ account, body }) =>
  ok(await addSuppressions(account.id, body.emails, "manual")),
);
