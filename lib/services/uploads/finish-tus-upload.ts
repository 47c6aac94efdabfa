import "server-only";
import { and, asc, eq, sql } from "drizzle-orm";
import { getDb, getDbHandle, type Tx } from "@/db/client";
import { tusUploadPieces, tusUploads } from "@/db/schema";
import { AppError } from "@/lib/errors";
import { storeCsv } from "./create-upload";

export type TusRow = typeof tusUploads.$inferSelect;

/** What a failed parse stored, enough to answer the same problem again (HEAD after a lost response). */
export type StoredProblem = { code: AppError["code"]; detail: string; errors?: AppError["errors"]; extensions?: Record<string, unknown> };

class AlreadyFinished extends Error {}

/**
 * The last byte is in: parse the stored pieces exactly like a multipart upload (the same `storeCsv`, so the same
 * CSV rules, row cap and errors) and record the outcome on the tus row. The upload, the row's `done` state and the
 * removal of the pieces commit together; a CSV problem is recorded as `failed` with its problem document. Other
 * errors (a lost database) leave the row `receiving` with every byte in: the next HEAD or PATCH finishes it.
 */
export async function finishTusUpload(row: TusRow): Promise<TusRow> {
  const db = await getDb();
  try {
    return await db.transaction(async (tx) => {
      const view = await storeCsv(tx, row.accountId, row.filename, readPieces(tx, row.id, row.length));
      const [done] = await tx
        .update(tusUploads)
        .set({ state: "done", uploadId: view.uploadId })
        .where(and(eq(tusUploads.id, row.id), eq(tusUploads.state, "receiving")))
        .returning();
      if (!done) throw new AlreadyFinished(); // another request finished it meanwhile: keep its outcome, drop ours
      await tx.delete(tusUploadPieces).where(eq(tusUploadPieces.tusUploadId, row.id));
      return done;
    });
  } catch (error) {
    if (error instanceof AlreadyFinished) return reread(row.id);
    if (!(error instanceof AppError)) throw error;
    const problem: StoredProblem = { code: error.code, detail: error.message, errors: error.errors, extensions: error.extensions };
    return db.transaction(async (tx) => {
      const [failed] = await tx
        .update(tusUploads)
        .set({ state: "failed", problem })
        .where(and(eq(tusUploads.id, row.id), eq(tusUploads.state, "receiving")))
        .returning();
      if (!failed) return reread(row.id);
      await tx.delete(tusUploadPieces).where(eq(tusUploadPieces.tusUploadId, row.id));
      return failed;
    });
  }
}

/** The problem a failed tus upload answers with (the same document as the multipart path's). */
export function storedProblemError(problem: StoredProblem): AppError {
  return new AppError(problem.code, problem.detail, { errors: problem.errors, extensions: problem.extensions });
}

async function reread(id: string): Promise<TusRow> {
  const db = await getDb();
  const [row] = await db.select().from(tusUploads).where(eq(tusUploads.id, id));
  if (!row) throw new AppError("not_found", "Upload not found");
  return row;
}

/** Pieces are handed to the parser in slices of this size, as the multipart path receives them from the network. */
const PARSE_SLICE_BYTES = 64 * 1024;

/**
 * The stored pieces in order (each ≤ 4 MiB), checked to be contiguous and complete. On PostgreSQL the next piece is
 * fetched on another pooled connection while this one is parsed and its rows inserted through `tx` (this took the
 * parse of a 20 MB file from ~6 s to ~2 s); PGlite has one connection, held by the transaction, so there the read
 * is queued on `tx` between the inserts.
 */
async function* readPieces(tx: Tx, id: string, length: number): AsyncIterable<Uint8Array> {
  const { db, driver } = await getDbHandle();
  const reader = driver === "postgres" ? db : tx;
  const pieces = await tx
    .select({ offset: tusUploadPieces.offset })
    .from(tusUploadPieces)
    .where(eq(tusUploadPieces.tusUploadId, id))
    .orderBy(asc(tusUploadPieces.offset));
  const fetchPiece = async (offset: number) => {
    // base64 text, decoded natively (PGlite parses bytea results byte by byte in JavaScript).
    const [piece] = await reader
      .select({ base64: sql<string>`encode(${tusUploadPieces.bytes}, 'base64')` })
      .from(tusUploadPieces)
      .where(and(eq(tusUploadPieces.tusUploadId, id), eq(tusUploadPieces.offset, offset)));
    return Buffer.from(piece.base64, "base64");
  };
  let expected = 0;
  let next = pieces.length > 0 ? fetchPiece(pieces[0].offset) : null;
  for (let i = 0; i < pieces.length; i++) {
    const { offset } = pieces[i];
    if (offset !== expected) throw new Error(`tus upload ${id}: piece at ${offset}, expected ${expected}`);
    const bytes = await next!;
    next = i + 1 < pieces.length ? fetchPiece(pieces[i + 1].offset) : null;
    expected += bytes.byteLength;
    for (let at = 0; at < bytes.byteLength; at += PARSE_SLICE_BYTES) yield bytes.subarray(at, at + PARSE_SLICE_BYTES);
  }
  if (expected !== length) throw new Error(`tus upload ${id}: ${expected} bytes stored, ${length} declared`);
}
