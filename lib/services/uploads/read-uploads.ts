import "server-only";
import { and, desc, eq, isNull } from "drizzle-orm";
import { getDb, type Db } from "@/db/client";
import { uploads } from "@/db/schema";
import { readUploadRows } from "@/db/queries/upload-rows";
import { AppError } from "@/lib/errors";
import { decodeCursor, newestFirstAfter, page } from "@/lib/http/pagination";
import { toUploadView } from "./upload-view";

export const PREVIEW_ROWS = 20;

/** An upload the account may see: its own, not deleted, uploaded by a person (not a cached Drive file). */
async function findOwnUpload(db: Db, accountId: string, uploadId: string) {
  const [upload] = await db
    .select()
    .from(uploads)
    .where(and(eq(uploads.id, uploadId), eq(uploads.accountId, accountId), eq(uploads.source, "upload"), isNull(uploads.deletedAt)));
  if (!upload) throw new AppError("not_found", "Upload not found");
  return upload;
}

export async function listUploads(accountId: string, query: { limit: number; cursor?: string }) {
  const db = await getDb();
  const after = newestFirstAfter(decodeCursor(query.cursor), uploads.createdAt, uploads.id);
  const rows = await db
    .select()
    .from(uploads)
    .where(and(eq(uploads.accountId, accountId), eq(uploads.source, "upload"), isNull(uploads.deletedAt), after))
    .orderBy(desc(uploads.createdAt), desc(uploads.id))
    .limit(query.limit + 1);
  const result = page(rows, query.limit, (row) => ({ k: row.createdAt.toISOString(), id: row.id }));
  return { items: result.items.map(toUploadView), nextCursor: result.nextCursor };
}

export async function getUpload(accountId: string, uploadId: string) {
  const db = await getDb();
  const upload = await findOwnUpload(db, accountId, uploadId);
  const preview = await readUploadRows(db, upload, 0, PREVIEW_ROWS);
  return { ...toUploadView(upload), preview };
}

export async function getUploadRows(accountId: string, uploadId: string, query: { offset: number; limit: number }) {
  const db = await getDb();
  const upload = await findOwnUpload(db, accountId, uploadId);
  const items = await readUploadRows(db, upload, query.offset, query.limit);
  return { items, total: upload.rowCount };
}

/** Soft delete: workflows naming it fail at their DATA_SOURCE node from now on. */
export async function deleteUpload(accountId: string, uploadId: string): Promise<void> {
  const db = await getDb();
  const deleted = await db
    .update(uploads)
    .set({ deletedAt: new Date() })
    .where(and(eq(uploads.id, uploadId), eq(uploads.accountId, accountId), eq(uploads.source, "upload"), isNull(uploads.deletedAt)))
    .returning({ id: uploads.id });
  if (deleted.length === 0) throw new AppError("not_found", "Upload not found");
}
