import type { uploads } from "@/db/schema";

type UploadRow = typeof uploads.$inferSelect;

/** The API shape of an upload's metadata. */
export function toUploadView(upload: UploadRow) {
  return {
    uploadId: upload.id,
    filename: upload.filename,
    rowCount: upload.rowCount,
    columns: upload.columns,
    sizeBytes: upload.sizeBytes,
    createdAt: upload.createdAt.toISOString(),
  };
}

export type UploadView = ReturnType<typeof toUploadView>;
