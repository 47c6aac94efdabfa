import { boolean, date, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { accounts } from "./accounts";
import { createdAt, ts } from "./columns";

export type SenderKind = "resend" | "smtp" | "ses";

/** What of a sender's configuration may be shown (the secret parts are in `secretEncrypted`). */
export type SenderSettings = {
  smtp?: { host: string; port: number; secure: boolean; username?: string };
  ses?: { region: string; accessKeyId: string; configurationSet?: string };
  /** The SNS topic whose subscription this SES sender confirmed first: the only topic its events are taken from. */
  snsTopicArn?: string;
};

/** An account's own email provider for its OUTPUT nodes (Resend key, SMTP server or Amazon SES account). */
export const senders = pgTable("senders", {
  id: text("id").primaryKey(),
  accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
  kind: text("kind").$type<SenderKind>().notNull(),
  name: text("name").notNull(),
  fromAddress: text("from_address").notNull(),
  replyTo: text("reply_to"),
  isDefault: boolean("is_default").notNull().default(false),
  /** Null: the kind's default (Resend 5 calls/s, SMTP 10 emails/s, SES the account's MaxSendRate). */
  ratePerSecond: doublePrecision("rate_per_second"),
  dailyQuota: integer("daily_quota"),
  settings: jsonb("settings").$type<SenderSettings>().notNull().default({}),
  /** AES-256-GCM ciphertext of the secret (API key, SMTP password, SES secret access key); null for SMTP without one. */
  secretEncrypted: text("secret_encrypted"),
  secretLast4: text("secret_last4"),
  lastError: text("last_error"),
  createdAt: createdAt(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
}, (t) => [
  index("senders_account_created_idx").on(t.accountId, t.createdAt),
  uniqueIndex("senders_one_default_key").on(t.accountId).where(sql`${t.isDefault}`),
]);

/** Emails sent per limiter key (a sender's provider account) and UTC day, for a sender's `dailyQuota`. */
export const senderDailyCounts = pgTable("sender_daily_counts", {
  key: text("key").notNull(),
  day: date("day").notNull(),
  n: integer("n").notNull(),
}, (t) => [primaryKey({ name: "sender_daily_counts_pk", columns: [t.key, t.day] })]);
