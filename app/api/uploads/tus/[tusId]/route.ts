import { route } from "@/lib/http/route";
import { handleTusRequest } from "@/lib/services/uploads/handle-tus-request";

export const dynamic = "force-dynamic";
// The last PATCH parses the whole file (up to UPLOAD_MAX_BYTES) before it answers.
export const maxDuration = 60;

// OPTIONS /api/uploads/tus/:tusId – tus discovery; no account needed
export const OPTIONS = route({ auth: false }, async ({ req }) => handleTusRequest(null, req));

// HEAD /api/uploads/tus/:tusId – the offset to resume from (and Flowmail-Upload-Id once finished)
export const HEAD = route({ auth: true }, async ({ account, req }) => handleTusRequest(account.id, req));

// PATCH /api/uploads/tus/:tusId – append ≤ 4 MiB at Upload-Offset; the last piece answers with Flowmail-Upload-Id
export const PATCH = route({ auth: true }, async ({ account, req }) => handleTusRequest(account.id, req));

// DELETE /api/uploads/tus/:tusId – terminate an upload (its received bytes are removed)
export const DELETE = route({ auth: true }, async ({ account, req }) => handleTusRequest(account.id, req));
