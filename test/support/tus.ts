import { DetailedError, Upload, type UploadOptions } from "tus-js-client";
import * as tusRoute from "@/app/api/uploads/tus/route";
import * as tusItemRoute from "@/app/api/uploads/tus/[tusId]/route";
import * as uploadsRoute from "@/app/api/uploads/route";
import * as uploadRoute from "@/app/api/uploads/[uploadId]/route";
import type { RouteTable } from "./route-server";

/** The upload routes, for `serveRoutes` (tus and multipart side by side). */
export const UPLOAD_ROUTES: RouteTable = [
  { pattern: /^\/api\/uploads\/tus\/?$/, module: tusRoute },
  { pattern: /^\/api\/uploads\/tus\/(?<tusId>[^/]+)$/, module: tusItemRoute },
  { pattern: /^\/api\/uploads\/?$/, module: uploadsRoute },
  { pattern: /^\/api\/uploads\/(?<uploadId>[^/]+)$/, module: uploadRoute },
];

export type TusResult = { uploadId: string | null; url: string | null; offsets: number[] };

/**
 * Uploads `data` with the official tus client (tus-js-client, Node build): 4 MiB pieces unless told otherwise.
 * Resolves with the `Flowmail-Upload-Id` of the last response; rejects with tus-js-client's DetailedError.
 */
export function tusUpload(baseUrl: string, token: string, data: Buffer, options: Partial<UploadOptions> = {}): Promise<TusResult> {
  const offsets: number[] = [];
  return new Promise((resolve, reject) => {
    const upload = new Upload(data, {
      endpoint: `${baseUrl}/api/uploads/tus`,
      chunkSize: 4 * 1024 * 1024,
      retryDelays: [0, 100, 300, 1000],
      metadata: { filename: "people.csv", filetype: "text/csv" },
      headers: { Authorization: `Bearer ${token}` },
      ...options,
      onAfterResponse: (req, res) => {
        if (req.getMethod() === "PATCH" && res.getStatus() === 204) offsets.push(Number(res.getHeader("Upload-Offset")));
        return options.onAfterResponse?.(req, res);
      },
      onSuccess: ({ lastResponse }) => resolve({ uploadId: lastResponse.getHeader("Flowmail-Upload-Id") ?? null, url: upload.url, offsets }),
      onError: reject,
    });
    upload.start();
  });
}

/** The problem document a failed tus request answered with. */
export function problemOf(error: unknown): { status: number; body: any } {
  if (!(error instanceof DetailedError) || !error.originalResponse) throw error;
  const res = error.originalResponse;
  return { status: res.getStatus(), body: JSON.parse(res.getBody() || "null") };
}

/** `rows` data rows of `columns` columns: a CSV of a predictable size. */
export function makeCsv(rows: number, columns = 8): Buffer {
  const header = Array.from({ length: columns }, (_, i) => `col${i}`).join(",");
  const lines = [header];
  for (let r = 0; r < rows; r++) {
    lines.push(Array.from({ length: columns }, (_, c) => (c === 1 ? `user${r}@example.com` : `r${r}c${c}xx`)).join(","));
  }
  return Buffer.from(lines.join("\n") + "\n");
}
