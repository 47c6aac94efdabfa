import "server-only";
import type { Readable } from "node:stream";
import { and, eq, sql } from "drizzle-orm";
import { DataStore, ERRORS, Upload } from "@tus/utils";
import { getDb } from "@/db/client";
import { tusUploadPieces, tusUploads } from "@/db/schema";
import { finishTusUpload, type TusRow } from "./finish-tus-upload";
import { assertCsvFile } from "./csv-file-type";
import { sanitizeFilename } from "./sanitize-filename";
import { assertStorageQuota } from "./storage-quota";

/** At most this many bytes per PATCH: under Vercel's 4.5 MB request body limit, with room for headers. */
export const TUS_PIECE_MAX_BYTES = 4 * 1024 * 1024;
/** Unfinished uploads (and the record of finished ones) are removed by the sweep after this long. */
export const TUS_EXPIRY_MS = 24 * 60 * 60 * 1000;

export const PIECE_TOO_LARGE = {
  status_code: 413,
  body: `A PATCH may carry at most ${TUS_PIECE_MAX_BYTES / 1024 / 1024} MiB: send the file in pieces (tus-js-client: chunkSize).`,
};

/**
 * @tus/server's DataStore over PostgreSQL (or PGlite), scoped to one account: another account's upload is simply
 * not found (404). One store per request, so `row` is the row this request last read or wrote — the handler
 * answers HEAD and the final PATCH from it.
 */
export class PgTusStore extends DataStore {
  row: TusRow | undefined;

  constructor(private readonly accountId: string) {
    super();
    this.extensions = ["creation", "termination", "expiration"];
  }

  override getExpiration(): number {
    return TUS_EXPIRY_MS;
  }

  override async create(upload: Upload): Promise<Upload> {
    const metadata = upload.metadata ?? {};
    // Refused at creation, before any piece is sent: tus-js-client sends the file's name and type as metadata.
    assertCsvFile(metadata.filename ?? "", metadata.filetype ?? undefined);
    const db = await getDb();
    await assertStorageQuota(db, this.accountId, upload.size ?? 0);
    const createdAt = new Date(upload.creation_date ?? Date.now());
    [this.row] = await db
      .insert(tusUploads)
      .values({
        id: upload.id,
        accountId: this.accountId,
        length: upload.size ?? 0,
        filename: sanitizeFilename(metadata.filename ?? ""),
        metadata,
        createdAt,
        expiresAt: new Date(createdAt.getTime() + TUS_EXPIRY_MS),
      })
      .returning();
    return upload;
  }

  /** Called under the upload's lock (HEAD, PATCH): a complete upload whose parse was interrupted is finished here. */
  override async getUpload(id: string): Promise<Upload> {
    const db = await getDb();
    const [row] = await db
      .select()
      .from(tusUploads)
      .where(and(eq(tusUploads.id, id), eq(tusUploads.accountId, this.accountId)));
    if (!row) throw ERRORS.FILE_NOT_FOUND;
    this.row = row;
    if (row.state === "receiving" && row.offset === row.length && row.createdAt.getTime() + TUS_EXPIRY_MS > Date.now()) {
      this.row = await finishTusUpload(row);
    }
    return toUpload(this.row);
  }

  /** Termination: the tus record and its pieces go; an upload it already became stays (DELETE /api/uploads/:id). */
  override async remove(id: string): Promise<void> {
    const db = await getDb();
    const removed = await db
      .delete(tusUploads)
      .where(and(eq(tusUploads.id, id), eq(tusUploads.accountId, this.accountId)))
      .returning({ id: tusUploads.id });
    if (removed.length === 0) throw ERRORS.FILE_NOT_FOUND;
  }

  /**
   * Stores one PATCH's bytes as one piece. They are gathered first (≤ 4 MiB), then committed with a compare-and-set
   * on the offset, so bytes are never stored twice whichever instance takes the piece. A connection that drops
   * half-way still stores what arrived, and the client resumes from there.
   */
  override async write(stream: Readable, id: string, offset: number): Promise<number> {
    const { bytes, failure } = await readPiece(stream);
    if (bytes.byteLength > 0) await this.storePiece(id, offset, bytes);
    if (failure !== undefined) throw failure;
    const row = this.row!;
    if (row.state === "receiving" && row.offset === row.length) this.row = await finishTusUpload(row);
    return this.row!.offset;
  }

  private async storePiece(id: string, offset: number, bytes: Uint8Array) {
    const db = await getDb();
    await db.transaction(async (tx) => {
      const [moved] = await tx
        .update(tusUploads)
        .set({ offset: sql`${tusUploads.offset} + ${bytes.byteLength}` })
        .where(
          and(
            eq(tusUploads.id, id),
            eq(tusUploads.accountId, this.accountId),
            eq(tusUploads.offset, offset),
            eq(tusUploads.state, "receiving"),
            sql`${tusUploads.offset} + ${bytes.byteLength} <= ${tusUploads.length}`,
          ),
        )
        .returning();
      if (!moved) throw ERRORS.INVALID_OFFSET; // another request stored bytes at this offset first: 409, nothing written
      // As base64 text decoded by the server: PGlite serializes a Uint8Array parameter byte by byte in JavaScript
      // (~5 s per 4 MiB here); Buffer's native base64 and PostgreSQL's decode() take milliseconds on both drivers.
      const encoded = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
      await tx.insert(tusUploadPieces).values({ tusUploadId: id, offset, bytes: sql`decode(${encoded}, 'base64')` });
      this.row = moved;
    });
  }
}

function toUpload(row: TusRow): Upload {
  return new Upload({
    id: row.id,
    size: row.length,
    offset: row.offset,
    metadata: row.metadata,
    creation_date: row.createdAt.toISOString(),
  });
}

/** The body of one PATCH, refused past 4 MiB; a read error (the client went away) keeps what arrived before it. */
async function readPiece(stream: Readable): Promise<{ bytes: Uint8Array; failure?: unknown }> {
  const chunks: Buffer[] = [];
  let total = 0;
  let failure: unknown;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      total += chunk.byteLength;
      if (total > TUS_PIECE_MAX_BYTES) {
        stream.destroy();
        throw PIECE_TOO_LARGE;
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (error === PIECE_TOO_LARGE) throw error;
    failure = error;
  }
  return { bytes: Buffer.concat(chunks, total), failure };
}
