import { index, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { accounts } from "./accounts";
import { createdAt, ts } from "./columns";

export type SuppressionReason = "unsubscribed" | "bounced" | "complained" | "manual";

/** Addresses an account never sends workflow email to again; stored normalised (trimmed, lower-case). */
export const suppressions = pgTable("suppressions", {
  accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
  email: text("email").notNull(),
  reason: text("reason").$type<SuppressionReason>().notNull(),
  createdAt: createdAt(),
}, (t) => [
  primaryKey({ columns: [t.accountId, t.email], name: "suppressions_pkey" }),
  index("suppressions_account_created_idx").on(t.accountId, t.createdAt, t.email),
]);

/**
 * The provider limiter shared by every run, process and instance: one row per provider key (a hash, never the key),
 * holding the earliest time the next provider call may start.
 */
export const emailSendPacing = pgTable("email_send_pacing", {
  key: text("key").primaryKey(),
  nextAt: ts("next_at").notNull().defaultNow(),
  /** The slot handed out by the last acquire (returned to its caller). */
  slotAt: ts("slot_at").notNull().defaultNow(),
  /** The provider's own per-second limit as its `ratelimit-limit` header last said. */
  providerLimit: integer("provider_limit"),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});
