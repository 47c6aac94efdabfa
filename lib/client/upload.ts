// Multipart upload through XMLHttpRequest: fetch() has no upload progress events in browsers.
import { ApiError, type FieldError } from "./api";
import type { UploadMeta } from "./types";

export function uploadCsv(file: File, onProgress?: (fraction: number) => void): Promise<UploadMeta> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/api/uploads");
    xhr.withCredentials = true;
    xhr.setRequestHeader("accept", "application/json");
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress?.(event.loaded / event.total);
    };
    xhr.onload = () => {
      const body = parse(xhr.responseText);
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress?.(1);
        resolve(body as unknown as UploadMeta);
        return;
      }
      reject(
        new ApiError({
          status: xhr.status,
          code: typeof body?.code === "string" ? body.code : `http_${xhr.status}`,
          title: typeof body?.title === "string" ? body.title : "Upload failed",
          detail: typeof body?.detail === "string" ? body.detail : `Upload failed (HTTP ${xhr.status}).`,
          errors: Array.isArray(body?.errors) ? (body.errors as FieldError[]) : [],
        }),
      );
    };
    xhr.onerror = () => reject(new Error("The upload was interrupted. Check your connection and try again."));
    const form = new FormData();
    form.append("file", file);
    xhr.send(form);
  });
}

function parse(text: string): Record<string, unknown> | null {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
}
