import "server-only";
import { randomBytes } from "node:crypto";
import { Server } from "@tus/server";
import { TUS_RESUMABLE } from "@tus/utils";
import { getConfig } from "@/lib/config";
import { AppError } from "@/lib/errors";
import { errorResponse, problem, PROBLEM_CONTENT_TYPE } from "@/lib/http/problem";
import { storedProblemError, type StoredProblem } from "./finish-tus-upload";
import { tusLocker } from "./tus-locker";
import { PIECE_TOO_LARGE, PgTusStore, TUS_PIECE_MAX_BYTES } from "./tus-store";

export const TUS_PATH = "/api/uploads/tus";
export const UPLOAD_ID_HEADER = "Flowmail-Upload-Id";
const OFFSET_CONTENT_TYPE = "application/offset+octet-stream";

/**
 * Serves one tus 1.0 request (core, creation, termination, expiration) for an authenticated account with
 * @tus/server's `handleWeb` and our PostgreSQL store. Around it: the checks where the tus spec asks for a status
 * @tus/server does not give (415 for a wrong Content-Type, 412 for another protocol version, 413 for a PATCH over
 * 4 MiB), and every error answered as problem+json like the rest of the API. `accountId` is null only for OPTIONS.
 */
export async function handleTusRequest(accountId: string | null, req: Request): Promise<Response> {
  const method = req.method.toUpperCase();
  const refused = precheck(method, req.headers);
  if (refused) return drained(req, refused);
  // OPTIONS (discovery) runs without an account; its store finds nothing.
  const store = new PgTusStore(accountId ?? "");
  const server = new Server({
    path: TUS_PATH,
    datastore: store,
    locker: tusLocker(),
    maxSize: getConfig().uploadMaxBytes,
    relativeLocation: true,
    // The web app is same-origin; integrators call from servers. No cross-origin browser access.
    allowedOrigins: [new URL(getConfig().appUrl).origin],
    exposedHeaders: [UPLOAD_ID_HEADER],
    namingFunction: () => `tus_${randomBytes(16).toString("base64url")}`,
    onUploadFinish: async () => finalResponse(store),
    onResponseError: (_req, error) => asTusError(error, method, req.url),
  });
  const res = await server.handleWeb(req);
  // @tus/server asks to close the connection after a failed PATCH; with the body still unread that turns into a
  // reset the client sees instead of our answer. Node discards the rest of an unread body on a kept-alive socket.
  res.headers.delete("connection");
  if (method === "HEAD" && res.status === 200) return headResponse(res, store);
  return res.status >= 400 ? drained(req, await asProblem(res)) : res;
}

/**
 * Reads and drops the rest of a refused request's body (at most one piece) before answering: a server that answers
 * with the body unread closes the connection, and the client may then see a reset instead of our 404 or 409.
 */
async function drained(req: Request, res: Response): Promise<Response> {
  if (res.status === 413) res.headers.set("Connection", "close"); // not worth reading: the client must not reuse the socket
  if (!req.body || req.bodyUsed || res.status === 413) return res;
  const reader = req.body.getReader();
  let total = 0;
  try {
    while (total <= TUS_PIECE_MAX_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
    }
  } catch {
    // the client went away: nothing to answer
  } finally {
    await reader.cancel().catch(() => {});
  }
  return res;
}

/** The checks @tus/server would answer with another status than the tus spec asks for (or would not make). */
function precheck(method: string, headers: Headers): Response | null {
  const tus = { "Tus-Resumable": TUS_RESUMABLE };
  const version = headers.get("tus-resumable");
  if (method !== "OPTIONS" && version !== null && version !== TUS_RESUMABLE) {
    return problemResponse(412, "unsupported_tus_version", "Precondition failed", `This server speaks tus ${TUS_RESUMABLE} only.`, {
      ...tus,
      "Tus-Version": TUS_RESUMABLE,
    });
  }
  if (method !== "PATCH") return null;
  const contentType = (headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (contentType !== OFFSET_CONTENT_TYPE) {
    return problem("unsupported_media_type", `Send each piece with \`Content-Type: ${OFFSET_CONTENT_TYPE}\`.`, { headers: tus });
  }
  const offset = headers.get("upload-offset");
  if (offset === null || !/^\d{1,15}$/.test(offset)) {
    return problem("bad_request", "Send `Upload-Offset` with the offset HEAD reported (a non-negative integer).", { headers: tus });
  }
  const declared = Number(headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > TUS_PIECE_MAX_BYTES) {
    // Refused unread: the client must not reuse this connection (the rest of its body is still on the way).
    return problem("payload_too_large", PIECE_TOO_LARGE.body, { headers: { ...tus, Connection: "close" } });
  }
  return null;
}

function problemResponse(status: number, code: string, title: string, detail: string, headers: Record<string, string>): Response {
  const all = new Headers(headers);
  all.set("Content-Type", PROBLEM_CONTENT_TYPE);
  all.set("Cache-Control", "no-store");
  return new Response(JSON.stringify({ type: "about:blank", title, status, code, detail }), { status, headers: all });
}

/** The final PATCH (or a creation with the whole body): 204 with the upload's id, or the CSV's problem. */
async function finalResponse(store: PgTusStore) {
  const row = store.row;
  if (row?.state === "failed" && row.problem) throw storedProblemError(row.problem as StoredProblem);
  if (row?.state !== "done" || !row.uploadId) throw new AppError("service_unavailable", "The upload could not be finished yet: retry.");
  return { headers: { [UPLOAD_ID_HEADER]: row.uploadId } };
}

/** HEAD of a finished upload also names the upload (the final PATCH's response may have been lost). */
function headResponse(res: Response, store: PgTusStore): Response {
  const row = store.row;
  if (row?.state === "failed" && row.problem) {
    const error = storedProblemError(row.problem as StoredProblem);
    return new Response(null, { status: error.status, headers: { "Tus-Resumable": TUS_RESUMABLE, "Cache-Control": "no-store" } });
  }
  if (row?.state === "done" && row.uploadId) res.headers.set(UPLOAD_ID_HEADER, row.uploadId);
  return res;
}

const TUS_STATUS_PROBLEMS: Record<number, { code: string; title: string }> = {
  400: { code: "bad_request", title: "Bad request" },
  404: { code: "not_found", title: "Not found" },
  409: { code: "conflict", title: "Conflict" },
  410: { code: "upload_expired", title: "Gone" },
  412: { code: "unsupported_tus_version", title: "Precondition failed" },
  413: { code: "payload_too_large", title: "Payload too large" },
  423: { code: "locked", title: "Locked" },
  501: { code: "not_implemented", title: "Not implemented" },
};

type TusError = { status_code: number; body: string };

/**
 * Our own errors become problem documents here (@tus/server only knows status + body); anything unknown is logged
 * by `errorResponse` and answered generically, never with its message.
 */
async function asTusError(error: Error | TusError, method: string, url: string): Promise<TusError | undefined> {
  if ("status_code" in error && typeof error.status_code === "number") return undefined;
  const res = errorResponse(error, { method, path: new URL(url).pathname });
  return { status_code: res.status, body: await res.text() };
}

/** @tus/server's text errors as problem+json (bodies that already are problem documents keep their shape). */
async function asProblem(res: Response): Promise<Response> {
  const headers = new Headers(res.headers);
  headers.delete("content-length");
  headers.delete("connection");
  const text = await res.text();
  let body: Record<string, unknown> | null = null;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === "object" && "code" in parsed) body = parsed as Record<string, unknown>;
  } catch {
    // a plain-text tus error
  }
  if (body) {
    headers.set("Content-Type", PROBLEM_CONTENT_TYPE);
    headers.set("Cache-Control", "no-store");
    return new Response(JSON.stringify(body), { status: res.status, headers });
  }
  const known = TUS_STATUS_PROBLEMS[res.status] ?? { code: "bad_request", title: "Bad request" };
  return problemResponse(res.status, known.code, known.title, text.trim() || known.title, Object.fromEntries(headers));
}
