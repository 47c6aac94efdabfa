import { sql } from "drizzle-orm";
import { index, integer, jsonb, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { accounts } from "./accounts";
import { createdAt, ts } from "./columns";

export const workflows = pgTable("workflows", {
  id: text("id").primaryKey(),
  accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
  name: text("name").notNull(),
  /** The graph exactly as submitted (domain format, not React Flow's). */
  graph: jsonb("graph").$type<unknown>().notNull(),
  version: integer("version").notNull().default(1),
  createdAt: createdAt(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
  /** Soft delete: runs keep pointing at the workflow and stay readable. */
  deletedAt: ts("deleted_at"),
  /** `{ cron, timezone, enabled }` or null. */
  schedule: jsonb("schedule").$type<{ cron: string; timezone: string; enabled: boolean } | null>(),
  /** The next slot the schedule is due (null: no schedule or disabled); the sweep looks for rows at or before now. */
  scheduleNextAt: ts("schedule_next_at"),
}, (t) => [
  index("workflows_account_idx").on(t.accountId, t.updatedAt),
  index("workflows_schedule_due_idx").on(t.scheduleNextAt).where(sql`schedule_next_at is not null and deleted_at is null`),
]);

export const workflowVersions = pgTable("workflow_versions", {
  workflowId: text("workflow_id").notNull().references(() => workflows.id, { onDelete: "cascade" }),
  version: integer("version").notNull(),
  name: text("name").notNull(),
  graph: jsonb("graph").$type<unknown>().notNull(),
  createdAt: createdAt(),
}, (t) => [primaryKey({ columns: [t.workflowId, t.version] })]);
