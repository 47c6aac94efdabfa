import { index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { accounts } from "./accounts";
import { createdAt, ts } from "./columns";

/**
 * An integrator's API key. Only the key's HMAC is stored (`keyHash`); `prefix` is its first characters, shown to tell
 * keys apart. Scopes and workflow confinement are fixed at creation; a revoked key keeps its row (revokedAt) so that
 * its next use is answered "revoked" rather than "unknown".
 */
export const apiKeys = pgTable("api_keys", {
  id: text("id").primaryKey(),
  accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
  name: text("name").notNull(),
  keyHash: text("key_hash").notNull(),
  prefix: text("prefix").notNull(),
  scopes: text("scopes").array().notNull(),
  /** Null: every workflow of the account. */
  workflowIds: text("workflow_ids").array(),
  expiresAt: ts("expires_at"),
  lastUsedAt: ts("last_used_at"),
  revokedAt: ts("revoked_at"),
  createdAt: createdAt(),
}, (t) => [
  uniqueIndex("api_keys_key_hash_key").on(t.keyHash),
  index("api_keys_account_idx").on(t.accountId, t.createdAt).where(sql`"revoked_at" IS NULL`),
]);
