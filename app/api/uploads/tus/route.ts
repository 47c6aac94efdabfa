import { route } from "@/lib/http/route";
import { handleTusRequest } from "@/lib/services/uploads/handle-tus-request";

export const dynamic = "force-dynamic";
// The last PATCH parses the whole file (up to UPLOAD_MAX_BYTES) before it answers.
export const maxDuration = 60;

// OPTIONS /api/uploads/tus – tus discovery (Tus-Version, Tus-Extension, Tus-Max-Size); no account needed
export const OPTIONS = route({ auth: false }, async ({ req }) => handleTusRequest(null, req));

// POST /api/uploads/tus – create a resumable upload (tus creation: Upload-Length, Upload-Metadata filename)
export const POST = route({ auth: true }, async ({ account, req }) => handleTusRequest(account.id, req));
