import { ok, route } from "@/lib/http/route";
import { uploadIdParams, uploadRowsQuery } from "@/lib/schemas/uploads";
import { getUploadRows } from "@/lib/services/uploads/read-uploads";

export const dynamic = "force-dynamic";

// GET /api/uploads/:uploadId/rows?offset=&limit= – a page of rows as objects
export const GET = route({ auth: true, params: uploadIdParams, query: uploadRowsQuery }, async ({ account, params, query }) =>
  ok(await getUploadRows(account.id, params.uploadId, query)));
