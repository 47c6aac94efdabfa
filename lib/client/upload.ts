// Every file goes up with tus: 4 MiB pieces (under Vercel's 4.5 MB request limit), progress, and
// automatic resume — after a dropped connection from the offset the server reports, and after a page reload
// (tus-js-client keeps the upload's URL in localStorage, keyed by the file's name, size and date).
import { DetailedError, Upload } from "tus-js-client";
import { ApiError, apiFetch, type FieldError } from "./api";
import type { UploadMeta } from "./types";

export const TUS_ENDPOINT = "/api/uploads/tus";
export const TUS_CHUNK_BYTES = 4 * 1024 * 1024;
/** Waits before each retry of a failed piece (then HEAD and resume): about 30 s of a lost network in all. */
const RETRY_DELAYS_MS = [0, 1_000, 3_000, 5_000, 10_000, 10_000];

export function uploadCsv(file: File, onProgress?: (fraction: number) => void): Promise<UploadMeta> {
  return new Promise((resolve, reject) => {
    const upload = new Upload(file, {
      endpoint: new URL(TUS_ENDPOINT, window.location.origin).toString(),
      chunkSize: TUS_CHUNK_BYTES,
      retryDelays: RETRY_DELAYS_MS,
      metadata: { filename: file.name, filetype: file.type || "text/csv" },
      removeFingerprintOnSuccess: true,
      onProgress: (sent, total) => onProgress?.(total > 0 ? sent / total : 0),
      onSuccess: ({ lastResponse }) => {
        const uploadId = lastResponse.getHeader("Flowmail-Upload-Id");
        if (!uploadId) {
          reject(new Error("The upload finished but the server did not name it: try again."));
          return;
        }
        onProgress?.(1);
        apiFetch<UploadMeta>(`/api/uploads/${encodeURIComponent(uploadId)}`).then(resolve, reject);
      },
      onError: (error) => reject(toUploadError(error)),
    });
    // A file this browser already started (same name, size, date) continues where it stopped.
    upload
      .findPreviousUploads()
      .then((previous) => {
        if (previous.length > 0) upload.resumeFromPreviousUpload(previous[0]);
        upload.start();
      })
      .catch(() => upload.start());
  });
}

/** tus-js-client's error → our ApiError (the server's problem+json: invalid_csv names its line) or a network error. */
function toUploadError(error: Error): Error {
  const res = error instanceof DetailedError ? error.originalResponse : null;
  if (!res) return new Error("The upload was interrupted and could not resume. Check your connection and try again.");
  const body = parse(res.getBody());
  const status = res.getStatus();
  return new ApiError({
    status,
    code: typeof body?.code === "string" ? body.code : `http_${status}`,
    title: typeof body?.title === "string" ? body.title : "Upload failed",
    detail: typeof body?.detail === "string" ? body.detail : `Upload failed (HTTP ${status}).`,
    errors: Array.isArray(body?.errors) ? (body.errors as FieldError[]) : [],
  });
}

function parse(text: string | undefined): Record<string, unknown> | null {
  try {
    return text ? (JSON.parse(text) as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
