import { index, integer, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { accounts } from "./accounts";
import { createdAt, ts } from "./columns";
import { runs } from "./runs";
import { workflows } from "./workflows";

/** The local mailbox: every email when no RESEND_API_KEY is set. */
export const mailboxMessages = pgTable("mailbox_messages", {
  id: text("id").primaryKey(),
  from: text("from").notNull(),
  to: text("to").notNull(),
  subject: text("subject").notNull(),
  text: text("text"),
  html: text("html"),
  /** "otp" or "workflow", for display. */
  kind: text("kind").notNull().default("workflow"),
  idempotencyKey: text("idempotency_key"),
  /** Extra headers as sent (List-Unsubscribe, List-Unsubscribe-Post), so the mailbox can show the link. */
  headers: jsonb("headers").$type<Record<string, string>>(),
  createdAt: createdAt(),
}, (t) => [
  index("mailbox_to_idx").on(t.to, t.createdAt),
  uniqueIndex("mailbox_idempotency_key").on(t.idempotencyKey),
]);

export const webhooks = pgTable("webhooks", {
  id: text("id").primaryKey(),
  accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
  url: text("url").notNull(),
  events: jsonb("events").$type<string[]>().notNull(),
  workflowId: text("workflow_id").references(() => workflows.id, { onDelete: "cascade" }),
  /** The whsec_ secret, encrypted at rest. */
  secretEncrypted: text("secret_encrypted").notNull(),
  createdAt: createdAt(),
  deletedAt: ts("deleted_at"),
}, (t) => [index("webhooks_account_idx").on(t.accountId)]);

export const webhookDeliveries = pgTable("webhook_deliveries", {
  id: text("id").primaryKey(),
  webhookId: text("webhook_id").notNull().references(() => webhooks.id, { onDelete: "cascade" }),
  event: text("event").notNull(),
  runId: text("run_id").notNull().references(() => runs.id, { onDelete: "cascade" }),
  payload: jsonb("payload").$type<unknown>().notNull(),
  status: text("status").$type<"pending" | "succeeded" | "failed">().notNull().default("pending"),
  attempts: integer("attempts").notNull().default(0),
  lastStatusCode: integer("last_status_code"),
  lastError: text("last_error"),
  nextAttemptAt: ts("next_attempt_at"),
  createdAt: createdAt(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
}, (t) => [
  uniqueIndex("webhook_deliveries_once_key").on(t.webhookId, t.runId, t.event),
  index("webhook_deliveries_webhook_idx").on(t.webhookId, t.createdAt),
]);
