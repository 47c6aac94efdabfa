import { ok, created, route } from "@/lib/http/route";
import { listUploadsQuery } from "@/lib/schemas/uploads";
import { createUpload } from "@/lib/services/uploads/create-upload";
import { listUploads } from "@/lib/services/uploads/read-uploads";

export const dynamic = "force-dynamic";
// A 50 MiB upload is parsed and stored while it streams in; give it time on slow links.
export const maxDuration = 60;

// POST /api/uploads – upload a CSV (multipart field `file`), streamed into the database
export const POST = route({ auth: true }, async ({ account, req }) => created(await createUpload(account.id, req)));

// GET /api/uploads – the account's uploads, newest first
export const GET = route({ auth: true, query: listUploadsQuery }, async ({ account, query }) =>
  ok(await listUploads(account.id, query)));
