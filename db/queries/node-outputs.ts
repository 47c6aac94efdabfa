import "server-only";
import { sql, type SQL } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import { readUploadRows, uploadColumns, wholeUploadOf } from "./upload-rows";

/**
 * Large node outputs in pieces. A top-level array of more than SPILL_MIN_ITEMS elements — a DATA_SOURCE's
 * 100,000 rows (11 MB of JSON), a FILTER's 40,000 items — is not written as one jsonb value: its elements go to
 * `node_output_chunks` as JSON text, CHUNK_ITEMS per row and one statement per row, and the node's `output` keeps the
 * rest of the object with the array cut to its first HEAD_ITEMS elements. `spilled` names the cut fields:
 * `{"rows": {"length": 100000, "chunkItems": 2000}}`.
 *
 * Why: one 11 MB jsonb write held PGlite's only connection (and, while it was stringified, the event loop) for ~1 s,
 * and every request waited (bench/freeze.ts); reading the run view's preview detoasted the whole value on each poll
 * (~300 ms of PostgreSQL CPU per GET on this VM). In pieces, each statement is a few ms, requests interleave, and the
 * run view reads only the head. Text, not jsonb: nothing queries inside a piece, and PostgreSQL stores text without
 * parsing it.
 *
 * Readers: loadOutputs (the engine, when an output is not in its cache) puts the arrays back together with
 * readSpilledArrays; the output pages (get-node-output.ts) read only the pieces a page covers (readSpilledSlice);
 * the run view previews the head (HEAD_ITEMS = preview + 1, so it knows the array was cut); derive-run copies the
 * pieces of reused nodes; retention deletes them with the outputs.
 */
export const SPILL_MIN_ITEMS = 1_000;
export const CHUNK_ITEMS = 2_000;
/** The run view previews OUTPUT_PREVIEW_ITEMS (100) elements of an array; one more tells it the array was cut. */
export const HEAD_ITEMS = 101;
/** Pieces written at once (PostgreSQL: over the pool's connections; PGlite: queued, requests interleave between). */
const WRITE_CONCURRENCY = 3;
/** Pieces read per statement when an output is put back together. */
const READ_CHUNKS_PER_STATEMENT = 5;

/** A spilled field: in pieces of `chunkItems` elements, or every row of an upload (`upload`: its id), stored as it is. */
export type SpilledField = { length: number; chunkItems: number } | { length: number; upload: string };
export type Spilled = Record<string, SpilledField>;

/** True when the output has no top-level array long enough to be stored in pieces (one jsonb write is fine). */
export function isSmallOutput(output: Record<string, unknown>): boolean {
  for (const value of Object.values(output)) if (Array.isArray(value) && value.length > SPILL_MIN_ITEMS) return false;
  return true;
}

/**
 * Stores the large arrays of a node's output in pieces (after deleting any an earlier attempt of the node left) and
 * answers what the node row keeps: the output with those arrays cut to their head, and `spilled` (null when nothing
 * was large, and then nothing is written here). The node row's SUCCESS write must come after this resolves.
 */
export async function writeSpilledOutput(
  db: Db,
  runId: string,
  nodeId: string,
  output: Record<string, unknown>,
): Promise<{ inline: Record<string, unknown>; spilled: Spilled | null }> {
  if (isSmallOutput(output)) return { inline: output, spilled: null };
  const inline: Record<string, unknown> = {};
  const spilled: Spilled = {};
  const pieces: { field: string; seq: number; items: unknown[] }[] = [];
  for (const [key, value] of Object.entries(output)) {
    if (Array.isArray(value) && value.length > SPILL_MIN_ITEMS) {
      setOwn(inline, key, value.slice(0, HEAD_ITEMS));
      // A DATA_SOURCE's rows are its upload's rows, already stored: a reference, not an 11 MB copy.
      const upload = wholeUploadOf(value);
      if (upload) {
        spilled[key] = { length: value.length, upload };
        continue;
      }
      spilled[key] = { length: value.length, chunkItems: CHUNK_ITEMS };
      for (let seq = 0; seq * CHUNK_ITEMS < value.length; seq++) {
        pieces.push({ field: key, seq, items: value.slice(seq * CHUNK_ITEMS, (seq + 1) * CHUNK_ITEMS) });
      }
    } else setOwn(inline, key, value);
  }
  // A node executed again (a resumed run) may have left pieces: they go first (same statement count either way).
  await db.execute(sql`delete from node_output_chunks where run_id = ${runId} and node_id = ${nodeId}`);
  let next = 0;
  const writer = async () => {
    while (next < pieces.length) {
      const piece = pieces[next++];
      // Stringified here, a piece at a time: the event loop is free between pieces.
      await db.execute(sql`
        insert into node_output_chunks (run_id, node_id, field, seq, items)
        values (${runId}, ${nodeId}, ${piece.field}, ${piece.seq}, ${JSON.stringify(piece.items)})`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(WRITE_CONCURRENCY, pieces.length) }, writer));
  return { inline, spilled };
}

/**
 * The whole arrays of the spilled fields of some nodes of a run: `nodeId → field → elements`, read a few pieces per
 * statement in order (the event loop is free between statements).
 */
export async function readSpilledArrays(
  db: Db,
  runId: string,
  nodes: { nodeId: string; spilled: Spilled }[],
): Promise<Map<string, Map<string, unknown[]>>> {
  const out = new Map<string, Map<string, unknown[]>>();
  for (const { nodeId, spilled } of nodes) {
    for (const [field, info] of Object.entries(spilled)) {
      if (!("upload" in info)) continue;
      const rows = await readUploadField(db, info);
      let fields = out.get(nodeId);
      if (!fields) out.set(nodeId, (fields = new Map()));
      fields.set(field, rows);
    }
  }
  const nodeIds = nodes.filter((n) => Object.values(n.spilled).some((info) => !("upload" in info))).map((n) => n.nodeId);
  if (nodeIds.length === 0) return out;
  let after: { nodeId: string; field: string; seq: number } | null = null;
  for (;;) {
    const position: SQL = after
      ? sql`and (node_id, field, seq) > (${after.nodeId}, ${after.field}, ${after.seq})`
      : sql``;
    const rows: { node_id: string; field: string; seq: number; items: string }[] = await execRows(
      db,
      sql`select node_id, field, seq, items from node_output_chunks
          where run_id = ${runId} and node_id in (select jsonb_array_elements_text(${JSON.stringify(nodeIds)}::jsonb)) ${position}
          order by node_id, field, seq limit ${READ_CHUNKS_PER_STATEMENT}`,
    );
    for (const row of rows) {
      let fields = out.get(row.node_id);
      if (!fields) out.set(row.node_id, (fields = new Map()));
      let items = fields.get(row.field);
      if (!items) fields.set(row.field, (items = []));
      for (const item of JSON.parse(row.items) as unknown[]) items.push(item);
    }
    if (rows.length < READ_CHUNKS_PER_STATEMENT) return out;
    const last = rows[rows.length - 1];
    after = { nodeId: last.node_id, field: last.field, seq: Number(last.seq) };
  }
}

/** Puts a node row's output back together: its spilled fields replaced by their whole arrays. */
export function mergeSpilled(inline: Record<string, unknown>, arrays: Map<string, unknown[]> | undefined): Record<string, unknown> {
  if (!arrays) return inline;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(inline)) setOwn(out, key, arrays.get(key) ?? value);
  return out;
}

/** Elements [from, to] (inclusive, clamped to the array) of a spilled field: only the pieces that hold them are read. */
export async function readSpilledSlice(
  db: Db,
  runId: string,
  nodeId: string,
  field: string,
  info: SpilledField,
  from: number,
  to: number,
): Promise<unknown[]> {
  const last = Math.min(to, info.length - 1);
  if (from > last) return [];
  if ("upload" in info) return readUploadField(db, info, from, last - from + 1);
  const first = Math.floor(from / info.chunkItems);
  const end = Math.floor(last / info.chunkItems);
  const rows = await execRows<{ seq: number; items: string }>(
    db,
    sql`select seq, items from node_output_chunks
        where run_id = ${runId} and node_id = ${nodeId} and field = ${field} and seq between ${first} and ${end}
        order by seq`,
  );
  const out: unknown[] = [];
  for (const row of rows) {
    const base = Number(row.seq) * info.chunkItems;
    const items = JSON.parse(row.items) as unknown[];
    for (let i = Math.max(from - base, 0); i < items.length && base + i <= last; i++) out.push(items[i]);
  }
  return out;
}

/** Rows [offset, offset + limit) of a field stored as a reference to an upload (all of them by default). */
async function readUploadField(db: Db, info: { length: number; upload: string }, offset = 0, limit = info.length): Promise<unknown[]> {
  const columns = await uploadColumns(db, info.upload);
  if (!columns) throw new Error(`The upload ${info.upload} that a node output refers to is gone`);
  return readUploadRows(db, { id: info.upload, columns }, offset, Math.min(limit, info.length - offset));
}

/** `obj[key] = value` that keeps a `__proto__` key an own property (as JSON.parse does). */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}
