import { customType, index, integer, jsonb, pgTable, primaryKey, bigint, text } from "drizzle-orm/pg-core";
import { accounts } from "./accounts";
import { createdAt, ts } from "./columns";

export const uploads = pgTable("uploads", {
  id: text("id").primaryKey(),
  accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
  /** As the client sent it; data only, never used to name storage. */
  filename: text("filename").notNull(),
  rowCount: integer("row_count").notNull(),
  columns: jsonb("columns").$type<string[]>().notNull(),
  sizeBytes: bigint("size_bytes", { mode: "number" }).notNull(),
  /** "upload" for POST /api/uploads, "drive" for a cached Drive download. */
  source: text("source").notNull().default("upload"),
  createdAt: createdAt(),
  deletedAt: ts("deleted_at"),
}, (t) => [index("uploads_account_idx").on(t.accountId, t.createdAt)]);

/**
 * A chunk's rows as JSON in a text column. Nothing queries inside it, and skipping jsonb's parse and re-encode on
 * every insert makes a 50 MiB upload about a second faster on PGlite (measured: 2.8 s vs 3.6–5.2 s of CPU for
 * the inserts alone); drizzle still hands out `string[][]`.
 */
const jsonRows = customType<{ data: string[][]; driverData: string | string[][] }>({
  dataType: () => "text",
  toDriver: (value) => JSON.stringify(value),
  // A database still on the jsonb column (a server started before migration 0001) hands out parsed arrays.
  fromDriver: (value) => (typeof value === "string" ? (JSON.parse(value) as string[][]) : value),
});

/**
 * Rows are stored in chunks (arrays of cell arrays in header order) rather than one row per record:
 * bulk inserts of 500k rows and sequential reads are an order of magnitude faster this way.
 */
export const uploadChunks = pgTable("upload_chunks", {
  uploadId: text("upload_id").notNull().references(() => uploads.id, { onDelete: "cascade" }),
  chunkIndex: integer("chunk_index").notNull(),
  /** Index of the first row of this chunk within the upload. */
  firstRow: integer("first_row").notNull(),
  rowCount: integer("row_count").notNull(),
  rows: jsonRows("rows").notNull(),
}, (t) => [primaryKey({ columns: [t.uploadId, t.chunkIndex] })]);
