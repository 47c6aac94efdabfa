import "server-only";
import { and, asc, eq, gt, gte, isNull, lt, sql, type SQL } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import { uploadChunks, uploads } from "@/db/schema";
import { sliceClock } from "@/lib/slices";

export type CsvRow = Record<string, string>;

/**
 * Row objects inherit nothing: their prototype is an empty frozen object whose own prototype is null, so a column named
 * `__proto__`, `constructor` or `toString` is an own property like any other (Object.prototype's `__proto__` setter is
 * not on the chain) and no inherited name shadows a missing column. Not `Object.create(null)` itself: V8 keeps such
 * objects in dictionary mode, ~270 bytes a row of four columns against ~50 for objects built by one constructor (which
 * share a hidden class): 22 MB less heap for 100,000 rows, and faster reads in filters and templates.
 */
const NOTHING = Object.freeze(Object.create(null) as object);
const RowObject = function RowObject(this: object) {} as unknown as new () => CsvRow;
RowObject.prototype = NOTHING as CsvRow;

/** Turns stored cell arrays into row objects keyed by column name (they inherit nothing: see RowObject). */
export function cellsToRow(columns: string[], cells: string[]): CsvRow {
  const row = new RowObject();
  for (let i = 0; i < columns.length; i++) row[columns[i]] = cells[i] ?? "";
  return row;
}

/** The upload's metadata if it exists, is not deleted, and belongs to the account. */
export async function findUpload(db: Db, accountId: string, uploadId: string) {
  const [upload] = await db
    .select()
    .from(uploads)
    .where(and(eq(uploads.id, uploadId), eq(uploads.accountId, accountId), isNull(uploads.deletedAt)));
  return upload;
}

/**
 * findUpload and, when the upload fits one page of readUploadRows (CHUNKS_PER_PAGE chunks), every row of it, in one
 * statement (a tiny run's DATA_SOURCE: one round trip instead of two). The rows are what
 * readUploadRows(upload, 0, rowCount) answers, remembered as the whole upload; `rows` is absent for a larger upload
 * (read it with readUploadRows).
 */
export async function findUploadWithRows(db: Db, accountId: string, uploadId: string) {
  // A plain statement, not drizzle's select builder: it runs once in every run with a DATA_SOURCE, and building the
  // builder's query cost more than the statement's own text. `columns` is jsonb: both drivers parse it.
  const [found] = await execRows<UploadWithChunks>(
    db,
    sql`select u.id, u.columns, u.row_count, ${smallUploadChunks()} as chunks
      from uploads u where u.id = ${uploadId} and u.account_id = ${accountId} and u.deleted_at is null`,
  );
  return found ? uploadWithRows(found) : undefined;
}

/** An upload's row as findUploadWithRows and namedUploadsJson read it: its chunks (JSON text) when it has at most two. */
type UploadWithChunks = { id: string; columns: string[]; row_count: number | string; chunks: string[] | null };

/** The chunks of upload `u` as a JSON array of their text when it fits one page (CHUNKS_PER_PAGE), else null. */
function smallUploadChunks(): SQL {
  return sql`case when (select count(*) from upload_chunks c where c.upload_id = u.id) <= ${CHUNKS_PER_PAGE}
    then (select json_agg(c.rows::text order by c.chunk_index) from upload_chunks c where c.upload_id = u.id) end`;
}

function uploadWithRows(found: UploadWithChunks): { upload: { id: string; columns: string[]; rowCount: number }; rows?: CsvRow[] } {
  const { chunks } = found;
  const upload = { id: found.id, columns: found.columns, rowCount: Number(found.row_count) };
  if (!chunks) return { upload };
  const rows: CsvRow[] = [];
  for (const chunk of chunks) for (const cells of JSON.parse(chunk) as string[][]) rows.push(cellsToRow(upload.columns, cells));
  wholeUploads.set(rows, upload.id);
  return { upload, rows };
}

/**
 * A select-list expression for a statement that claims a run (lib/engine/queue.ts, the embedded executor only):
 * what findUploadWithRows answers for every upload the DATA_SOURCE nodes of the run's graph name, as one JSON array.
 * `relation` is the claim's CTE (its `graph` and `account_id`). A run claimed this way starts its DATA_SOURCE with
 * no statement of its own (UploadPrefetch): a tiny run makes one round trip fewer. An upload that is
 * deleted, another account's or missing is simply absent, and the node reads as before.
 */
export function namedUploadsJson(relation: SQL): SQL {
  return sql`(select coalesce(json_agg(json_build_object('id', u.id, 'columns', u.columns, 'row_count', u.row_count,
      'chunks', ${smallUploadChunks()})), '[]'::json)
    from ${relation} r join uploads u on u.account_id = r.account_id and u.deleted_at is null
      and u.id in (select n -> 'data' ->> 'uploadId' from jsonb_array_elements(r.graph -> 'nodes') n where n ->> 'type' = 'DATA_SOURCE'))`;
}

/**
 * The uploads the claim of the run being executed read (namedUploadsJson), for its DATA_SOURCE nodes: one per job of
 * the embedded executor, shared by its run store (which sets it at each claim) and its node ports (which read it).
 * Each claim replaces what the previous run's claim read, so a run reads its uploads as they were when it was
 * claimed, a few milliseconds before its DATA_SOURCE starts; a resumed run (no claim) reads them itself.
 */
export class UploadPrefetch {
  private readonly byId = new Map<string, { accountId: string; found: UploadWithChunks }>();

  /** What the claim of `accountId`'s run read (a JSON array, as text on a driver that does not parse json). */
  set(accountId: string, uploads: unknown): void {
    this.byId.clear();
    const list = (typeof uploads === "string" ? JSON.parse(uploads) : uploads) as UploadWithChunks[] | null | undefined;
    for (const found of list ?? []) this.byId.set(found.id, { accountId, found });
  }

  /** findUploadWithRows's answer for the upload, when the claim read it; undefined: read it with a statement. */
  find(accountId: string, uploadId: string): ReturnType<typeof uploadWithRows> | undefined {
    const known = this.byId.get(uploadId);
    return known && known.accountId === accountId ? uploadWithRows(known.found) : undefined;
  }
}

/** Row indexes are int4 in the database: "everything" must stay within it. */
const MAX_ROWS = 2_147_483_647;

/** Chunks per statement when reading an upload: 10,000 rows (uploads store UPLOAD_CHUNK_ROWS = 5,000 rows per chunk). */
const CHUNKS_PER_PAGE = 2;

/**
 * Rows [offset, offset + limit) of an upload, read from its chunks in order, a few chunks per statement (keyset on
 * chunk_index): a 100,000-row read is a dozen short statements with the event loop free between them (each converted
 * page yields), not one long block; on PGlite a page also bounds how much the WASM heap must hold at once.
 */
export async function readUploadRows(
  db: Db,
  upload: { id: string; columns: string[]; rowCount?: number },
  offset = 0,
  limit = MAX_ROWS,
): Promise<CsvRow[]> {
  const rows = await readRows(db, upload, offset, limit);
  // The whole upload, from its first row to its last: remembered (node-outputs.ts stores a reference, not a copy).
  if (offset === 0 && (rows.length < limit || rows.length === upload.rowCount)) wholeUploads.set(rows, upload.id);
  return rows;
}

/**
 * Arrays that readUploadRows answered with every row of an upload, in order, and that upload's id. An upload's chunks
 * are written once and never change or go away while its account exists (deleting an upload only marks it), so a node
 * output holding such an array is stored as a reference to the upload instead of a copy (db/queries/node-outputs.ts).
 * Only the very array answered counts: a copy, a slice or a filtered list is not the upload.
 */
const wholeUploads = new WeakMap<unknown[], string>();

export function wholeUploadOf(rows: unknown[]): string | undefined {
  return wholeUploads.get(rows);
}

/** The columns of an upload, deleted or not (a run that read it keeps reading it). */
export async function uploadColumns(db: Db, uploadId: string): Promise<string[] | undefined> {
  const [row] = await db.select({ columns: uploads.columns }).from(uploads).where(eq(uploads.id, uploadId));
  return row?.columns;
}

async function readRows(db: Db, upload: { id: string; columns: string[] }, offset: number, limit: number): Promise<CsvRow[]> {
  const end = Math.min(offset + limit, MAX_ROWS);
  const out: CsvRow[] = [];
  const page = (after: number) =>
    db
      .select({ chunkIndex: uploadChunks.chunkIndex, firstRow: uploadChunks.firstRow, rowCount: uploadChunks.rowCount, rows: uploadChunks.rows })
      .from(uploadChunks)
      .where(
        and(
          eq(uploadChunks.uploadId, upload.id),
          gt(uploadChunks.chunkIndex, after),
          lt(uploadChunks.firstRow, end),
          gte(sql`${uploadChunks.firstRow} + ${uploadChunks.rowCount}`, offset + 1),
        ),
      )
      .orderBy(asc(uploadChunks.chunkIndex))
      .limit(CHUNKS_PER_PAGE)
      .execute(); // now, once (a query builder runs again for each then())
  let next = page(-1);
  const clock = sliceClock();
  for (;;) {
    const chunks = await next;
    const full = chunks.length === CHUNKS_PER_PAGE;
    // The next page is read while this one is converted (the database's time and ours overlap: 100,000 rows on
    // PGlite, 10 pages, left ~25 ms of conversion between one page's answer and the next one's statement).
    if (full) {
      next = page(chunks[chunks.length - 1].chunkIndex);
      next.catch(() => {}); // awaited on the next turn (or dropped with this read's own error)
    }
    for (const chunk of chunks) {
      for (let i = 0; i < chunk.rows.length; i++) {
        if (clock.due()) await clock.yield();
        const index = chunk.firstRow + i;
        if (index < offset || index >= end) continue;
        out.push(cellsToRow(upload.columns, chunk.rows[i]));
      }
    }
    if (!full) return out;
    await clock.yield();
  }
}
