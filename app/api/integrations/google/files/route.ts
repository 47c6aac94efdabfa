import { listDriveFiles } from "@/lib/google/list-drive-files";
import { ok, route } from "@/lib/http/route";
import { driveFilesQuery } from "@/lib/schemas/integrations";

// GET /api/integrations/google/files?q= – CSV files and Sheets of the linked Drive, for the editor's picker
export const GET = route({ auth: true, query: driveFilesQuery }, async ({ account, query }) =>
  ok(await listDriveFiles(account.id, query.q)),
);
