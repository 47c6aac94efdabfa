import { bigint, customType, index, jsonb, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { accounts } from "./accounts";
import { createdAt, ts } from "./columns";
import { uploads } from "./uploads";

/** bytea as a Uint8Array on both drivers (postgres.js hands out a Buffer, PGlite a Uint8Array). */
const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => "bytea" });

/**
 * A resumable (tus) upload while its bytes arrive, and for a day after: the account it belongs to, its declared
 * length, how many bytes are stored, and once the last byte is in, the upload it became (or the CSV problem).
 */
export const tusUploads = pgTable("tus_uploads", {
  id: text("id").primaryKey(),
  accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
  length: bigint("length", { mode: "number" }).notNull(),
  offset: bigint("offset", { mode: "number" }).notNull().default(0),
  /** Sanitized `filename` from Upload-Metadata. */
  filename: text("filename").notNull(),
  /** Upload-Metadata as the client sent it (returned by HEAD). */
  metadata: jsonb("metadata").$type<Record<string, string | null>>().notNull(),
  /** receiving → done (uploadId set) or failed (problem set). */
  state: text("state").$type<"receiving" | "done" | "failed">().notNull().default("receiving"),
  uploadId: text("upload_id").references(() => uploads.id, { onDelete: "set null" }),
  problem: jsonb("problem").$type<Record<string, unknown>>(),
  /** A lease: the instance holding it may write; it expires on its own if that instance dies. */
  lockToken: text("lock_token"),
  lockExpiresAt: ts("lock_expires_at"),
  createdAt: createdAt(),
  expiresAt: ts("expires_at").notNull(),
}, (t) => [index("tus_uploads_expires_idx").on(t.expiresAt)]);

/** The bytes of one PATCH (≤ 4 MiB), keyed by the offset they start at. */
export const tusUploadPieces = pgTable("tus_upload_pieces", {
  tusUploadId: text("tus_upload_id").notNull().references(() => tusUploads.id, { onDelete: "cascade" }),
  offset: bigint("offset", { mode: "number" }).notNull(),
  bytes: bytea("bytes").notNull(),
}, (t) => [primaryKey({ columns: [t.tusUploadId, t.offset] })]);
