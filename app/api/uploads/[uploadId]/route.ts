import { noContent, ok, route } from "@/lib/http/route";
import { uploadIdParams } from "@/lib/schemas/uploads";
import { deleteUpload, getUpload } from "@/lib/services/uploads/read-uploads";

export const dynamic = "force-dynamic";

// GET /api/uploads/:uploadId – metadata and the first 20 rows
export const GET = route({ auth: true, params: uploadIdParams }, async ({ account, params }) =>
  ok(await getUpload(account.id, params.uploadId)));

// DELETE /api/uploads/:uploadId – soft delete
export const DELETE = route({ auth: true, params: uploadIdParams }, async ({ account, params }) => {
  await deleteUpload(account.id, params.uploadId);
  return noContent();
});
