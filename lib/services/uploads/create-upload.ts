import "server-only";
import { eq } from "drizzle-orm";
import { getDb, type Tx } from "@/db/client";
import { uploadChunks, uploads } from "@/db/schema";
import { parseCsvStream } from "@/lib/csv/parse-csv";
import { getConfig } from "@/lib/config";
import { newId } from "@/lib/ids";
import { assertCsvFile } from "./csv-file-type";
import { receiveMultipartFile } from "./receive-multipart-file";
import { sanitizeFilename } from "./sanitize-filename";
import { assertStorageQuota } from "./storage-quota";
import { toUploadView, type UploadView } from "./upload-view";

/** Rows per stored chunk: big enough that 500k rows take ~100 inserts, small enough to page through cheaply. */
export const UPLOAD_CHUNK_ROWS = 5000;

/**
 * POST /api/uploads: streams the multipart `file` through the CSV parser into `upload_chunks`, all inside one
 * transaction, so a file that turns out to be invalid half-way (or too large) leaves nothing behind.
 */
export async function createUpload(accountId: string, req: Request): Promise<UploadView> {
  const db = await getDb();
  const maxBytes = getConfig().uploadMaxBytes;
  // Refused before reading when the declared size already cannot fit; checked again on the stored size, in the same
  // transaction, so an upload past the quota leaves nothing behind.
  const declared = Number(req.headers.get("content-length"));
  await assertStorageQuota(db, accountId, Number.isFinite(declared) ? Math.max(0, Math.min(declared - 64 * 1024, maxBytes)) : 0);
  return receiveMultipartFile(req, { fieldName: "file", maxBytes }, async (bytes, info) => {
    assertCsvFile(info.filename, info.mimeType);
    return db.transaction(async (tx) => {
      const view = await storeCsv(tx, accountId, sanitizeFilename(info.filename), bytes);
      await assertStorageQuota(tx, accountId, 0);
      return view;
    });
  });
}

/** Parses `bytes` as CSV into a new upload inside `tx` (shared by multipart and the last byte of a tus upload). */
export async function storeCsv(tx: Tx, accountId: string, filename: string, bytes: AsyncIterable<Uint8Array>): Promise<UploadView> {
  const id = newId("upl");
  await tx.insert(uploads).values({ id, accountId, filename, rowCount: 0, columns: [], sizeBytes: 0 });
  let sizeBytes = 0;
  let chunkIndex = 0;
  let firstRow = 0;
  // One insert in flight while the next batch is parsed: on PostgreSQL the server stores a chunk while we parse.
  let inFlight: Promise<unknown> = Promise.resolve();
  async function* counted() {
    for await (const chunk of bytes) {
      sizeBytes += chunk.byteLength;
      yield chunk;
    }
  }
  try {
    const { columns, rowCount } = await parseCsvStream(
      counted(),
      async (rows) => {
        await inFlight;
        inFlight = tx.insert(uploadChunks).values({ uploadId: id, chunkIndex, firstRow, rowCount: rows.length, rows }).execute();
        chunkIndex++;
        firstRow += rows.length;
      },
      UPLOAD_CHUNK_ROWS,
    );
    await inFlight;
    const [stored] = await tx.update(uploads).set({ rowCount, columns, sizeBytes }).where(eq(uploads.id, id)).returning();
    return toUploadView(stored);
  } catch (error) {
    await inFlight.catch(() => {}); // let the last insert settle before the transaction rolls back
    throw error;
  }
}
