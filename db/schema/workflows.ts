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
}, (t) => [index("workflows_account_idx").on(t.accountId, t.updatedAt)]);

export const workflowVersions = pgTable("workflow_versions", {
  workflowId: text("workflow_id").notNull().references(() => workflows.id, { onDelete: "cascade" }),
  version: integer("version").notNull(),
  name: text("name").notNull(),
  graph: jsonb("graph").$type<unknown>().notNull(),
  createdAt: createdAt(),
}, (t) => [primaryKey({ columns: [t.workflowId, t.version] })]);
