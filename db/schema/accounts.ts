import { doublePrecision, index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { createdAt, ts } from "./columns";

export const accounts = pgTable("accounts", {
  id: text("id").primaryKey(),
  email: text("email").notNull(),
  passwordHash: text("password_hash").notNull(),
  fullName: text("full_name").notNull(),
  emailVerifiedAt: ts("email_verified_at"),
  /** Access tokens issued before this instant are refused. */
  passwordChangedAt: ts("password_changed_at"),
  aiProvider: text("ai_provider"),
  aiModel: text("ai_model"),
  aiBaseUrl: text("ai_base_url"),
  /** AES-256-GCM ciphertext (see lib/auth/crypto). */
  aiKeyEncrypted: text("ai_key_encrypted"),
  aiKeyLast4: text("ai_key_last4"),
  /** AI pacing and prices (PUT /api/account/ai-provider); null: not set. */
  aiRequestsPerMinute: integer("ai_requests_per_minute"),
  aiTokensPerMinute: integer("ai_tokens_per_minute"),
  aiMaxConcurrency: integer("ai_max_concurrency"),
  aiInputPricePerMillion: doublePrecision("ai_input_price_per_million"),
  aiOutputPricePerMillion: doublePrecision("ai_output_price_per_million"),
  aiMaxCostPerRunUsd: doublePrecision("ai_max_cost_per_run_usd"),
  createdAt: createdAt(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
}, (t) => [uniqueIndex("accounts_email_key").on(t.email)]);

export const otpCodes = pgTable("otp_codes", {
  id: text("id").primaryKey(),
  accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
  codeHash: text("code_hash").notNull(),
  attempts: integer("attempts").notNull().default(0),
  expiresAt: ts("expires_at").notNull(),
  /** Set when used, voided by a newer code, or burnt by too many attempts. */
  consumedAt: ts("consumed_at"),
  createdAt: createdAt(),
}, (t) => [index("otp_codes_account_idx").on(t.accountId, t.createdAt)]);

export const refreshTokens = pgTable("refresh_tokens", {
  id: text("id").primaryKey(),
  accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
  /** All tokens descended from one login share a family; reuse of a rotated token revokes the family. */
  familyId: text("family_id").notNull(),
  tokenHash: text("token_hash").notNull(),
  expiresAt: ts("expires_at").notNull(),
  rotatedAt: ts("rotated_at"),
  revokedAt: ts("revoked_at"),
  createdAt: createdAt(),
}, (t) => [
  uniqueIndex("refresh_tokens_hash_key").on(t.tokenHash),
  index("refresh_tokens_family_idx").on(t.familyId),
  index("refresh_tokens_account_idx").on(t.accountId),
]);
