import { bigserial, index, integer, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { accounts } from "./accounts";
import { createdAt, ts } from "./columns";
import { workflows } from "./workflows";

/**
 * One row per schedule slot that enqueued a run. The primary key on (workflow, slot) is what makes a
 * slot exactly one run whatever the number of instances or restarts: the run is inserted in the same statement as
 * this row, and only when this row was new.
 */
export const scheduleSlots = pgTable("schedule_slots", {
  workflowId: text("workflow_id").notNull().references(() => workflows.id, { onDelete: "cascade" }),
  slotAt: ts("slot_at").notNull(),
  runId: text("run_id").notNull(),
  createdAt: createdAt(),
}, (t) => [primaryKey({ columns: [t.workflowId, t.slotAt] })]);

/** An inbound hook: `POST /api/hooks/:token` starts a run of its workflow. Only the token's SHA-256 is stored. */
export const inboundHooks = pgTable("inbound_hooks", {
  id: text("id").primaryKey(),
  workflowId: text("workflow_id").notNull().references(() => workflows.id, { onDelete: "cascade" }),
  accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
  tokenHash: text("token_hash").notNull(),
  createdAt: createdAt(),
}, (t) => [
  uniqueIndex("inbound_hooks_token_hash_key").on(t.tokenHash),
  index("inbound_hooks_workflow_idx").on(t.workflowId, t.createdAt),
]);

/** The recent deliveries of a hook (the editor's "last deliveries"); only the newest few per hook are kept. */
export const hookDeliveries = pgTable("hook_deliveries", {
  id: bigserial("id", { mode: "number" }).primaryKey(),
  hookId: text("hook_id").notNull().references(() => inboundHooks.id, { onDelete: "cascade" }),
  /** The HTTP status answered (202, or the problem's status). */
  status: integer("status").notNull(),
  runId: text("run_id"),
  /** The problem's `code` when the delivery was refused. */
  code: text("code"),
  idempotencyKey: text("idempotency_key"),
  sizeBytes: integer("size_bytes").notNull(),
  receivedAt: ts("received_at").notNull().defaultNow(),
}, (t) => [index("hook_deliveries_hook_idx").on(t.hookId, t.id)]);
