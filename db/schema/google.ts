import { jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { accounts } from "./accounts";
import { createdAt, ts } from "./columns";

export const googleLinks = pgTable("google_links", {
  accountId: text("account_id").primaryKey().references(() => accounts.id, { onDelete: "cascade" }),
  googleEmail: text("google_email").notNull(),
  scopes: jsonb("scopes").$type<string[]>().notNull(),
  refreshTokenEncrypted: text("refresh_token_encrypted").notNull(),
  /** "broken" after Google answered invalid_grant: the user must reconnect. */
  status: text("status").$type<"active" | "broken">().notNull().default("active"),
  connectedAt: createdAt(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

/** One row per consent attempt: binds the signed `state` to the account and the PKCE verifier; used once. */
export const oauthStates = pgTable("oauth_states", {
  id: text("id").primaryKey(),
  accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
  codeVerifier: text("code_verifier").notNull(),
  expiresAt: ts("expires_at").notNull(),
  usedAt: ts("used_at"),
  createdAt: createdAt(),
});
