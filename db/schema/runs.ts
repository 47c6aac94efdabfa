import { sql } from "drizzle-orm";
import { bigint, bigserial, boolean, date, foreignKey, index, integer, jsonb, pgTable, primaryKey, smallint, text, uniqueIndex } from "drizzle-orm/pg-core";
import { accounts } from "./accounts";
import { createdAt, ts } from "./columns";
import { workflows } from "./workflows";

import type { EmailSendStatus } from "../../lib/ledgers/types";
import type { NodeStatus, RunMode, RunResult, RunStatus, RunTrigger } from "../../lib/schemas/runs";

// The run's enumerations and result are defined once, by the API's schemas; an email's status by the ledgers' types.
export type { EmailSendStatus, NodeStatus, RunMode, RunResult, RunStatus, RunTrigger };

export const runs = pgTable("runs", {
  id: text("id").primaryKey(),
  /** Enqueue order: runs of one workflow are claimed strictly by ascending seq. */
  seq: bigserial("seq", { mode: "number" }).notNull(),
  workflowId: text("workflow_id").notNull().references(() => workflows.id),
  accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
  workflowVersion: integer("workflow_version").notNull(),
  /** Snapshot of the graph at enqueue time: a later PATCH never changes a queued run. */
  graph: jsonb("graph").$type<unknown>().notNull(),
  status: text("status").$type<RunStatus>().notNull().default("PENDING"),
  result: jsonb("result").$type<RunResult>(),
  error: text("error"),
  enqueuedAt: ts("enqueued_at").notNull().defaultNow(),
  startedAt: ts("started_at"),
  completedAt: ts("completed_at"),
  /** Heartbeat of the executor holding the run; lets a restarted process resume it. */
  heartbeatAt: ts("heartbeat_at"),
  trigger: text("trigger").$type<RunTrigger>().notNull().default("manual"),
  mode: text("mode").$type<RunMode>().notNull().default("live"),
  /** Preview `until`: only this node and its ancestors execute; every other node is SKIPPED. */
  untilNodeId: text("until_node_id"),
  /** The FAILED run this one retries (its successful nodes are reused). */
  retryOf: text("retry_of"),
  /** The SUCCESS preview this live run sends (its node outputs are reused). */
  sendOf: text("send_of"),
  /** The run whose emails of unknown fate this live run sends again (POST …/resend-unknown). */
  resendOf: text("resend_of"),
  /** The first run of a retry chain (null: this run is its own root); the send ledger is keyed by it. */
  chainRootId: text("chain_root_id"),
  /** An inbound hook's JSON body: the TRIGGER node's output is `{ body }` for this run. */
  triggerBody: jsonb("trigger_body").$type<unknown>(),
  /**
   * `{ appUrl, from }` of the instance that first claimed the run (or of its retry chain's first run): what its
   * emails' unsubscribe links and sender are built with, whichever instance sends them (migration 0014).
   */
  emailIdentity: jsonb("email_identity").$type<{ appUrl: string; from: string }>(),
  /** Set by POST …/cancel on a RUNNING run; the engine stops at its next node or batch boundary. */
  cancelRequestedAt: ts("cancel_requested_at"),
  /** The advisory-lock key held by the process executing this RUNNING run (its lock vanishes when it dies). */
  executorKey: integer("executor_key"),
  /** Set when RUN_OUTPUT_RETENTION_DAYS dropped the node outputs and per-email records: output endpoints answer 410. */
  outputsExpiredAt: ts("outputs_expired_at"),
  /** The W3C `traceparent` of the request that enqueued the run: its spans are that trace's children. */
  traceparent: text("traceparent"),
}, (t) => [
  uniqueIndex("runs_seq_key").on(t.seq),
  index("runs_workflow_queue_idx").on(t.workflowId, t.status, t.seq),
  index("runs_account_idx").on(t.accountId, t.enqueuedAt),
  index("runs_account_seq_idx").on(t.accountId, t.seq),
  index("runs_outputs_retention_idx").on(t.completedAt).where(sql`outputs_expired_at is null`),
  // The backstop of per-workflow serialization: at most one RUNNING run per workflow.
  uniqueIndex("runs_one_running_per_workflow").on(t.workflowId).where(sql`status = 'RUNNING'`),
  // The queue as a whole (pending gauge, oldest pending age, lost wake-ups) costs the queue's size, not the history's.
  index("runs_pending_idx").on(t.enqueuedAt).where(sql`status = 'PENDING'`),
]);

export const nodeResults = pgTable("node_results", {
  runId: text("run_id").notNull().references(() => runs.id, { onDelete: "cascade" }),
  nodeId: text("node_id").notNull(),
  type: text("type").notNull(),
  status: text("status").$type<NodeStatus>().notNull().default("PENDING"),
  output: jsonb("output").$type<Record<string, unknown>>(),
  error: text("error"),
  itemsIn: integer("items_in"),
  itemsOut: integer("items_out"),
  /** Copied from the run this one reuses (retry, send of a preview): not executed again. */
  reused: boolean("reused").notNull().default(false),
  /** A running OUTPUT node's `{ sent, total }` (an AI node with forEach writes `{ done, total }` in raw SQL). */
  progress: jsonb("progress").$type<{ sent: number; total: number }>(),
  startedAt: ts("started_at"),
  completedAt: ts("completed_at"),
  /**
   * Top-level arrays of `output` stored apart (db/queries/node-outputs.ts): in node_output_chunks, or as a reference to
   * the upload whose rows they are; `output` holds their head.
   */
  spilled: jsonb("spilled").$type<Record<string, { length: number; chunkItems: number } | { length: number; upload: string }>>(),
}, (t) => [primaryKey({ columns: [t.runId, t.nodeId] })]);

/** A large top-level array of a node's output, in pieces of `chunkItems` elements (JSON text): see node-outputs.ts. */
export const nodeOutputChunks = pgTable("node_output_chunks", {
  runId: text("run_id").notNull(),
  nodeId: text("node_id").notNull(),
  field: text("field").notNull(),
  seq: integer("seq").notNull(),
  items: text("items").notNull(),
}, (t) => [
  primaryKey({ name: "node_output_chunks_pk", columns: [t.runId, t.nodeId, t.field, t.seq] }),
  foreignKey({ name: "node_output_chunks_node_fk", columns: [t.runId, t.nodeId], foreignColumns: [nodeResults.runId, nodeResults.nodeId] }).onDelete("cascade"),
]);

export const runLogs = pgTable("run_logs", {
  id: bigserial("id", { mode: "number" }).primaryKey(),
  runId: text("run_id").notNull().references(() => runs.id, { onDelete: "cascade" }),
  at: ts("at").notNull().defaultNow(),
  level: text("level").$type<"debug" | "info" | "warn" | "error">().notNull(),
  nodeId: text("node_id"),
  message: text("message").notNull(),
}, (t) => [index("run_logs_run_idx").on(t.runId, t.id)]);

/**
 * The exactly-once guard for workflow emails: one row per (run, node, item), inserted before the provider call;
 * the same key is the provider's idempotency key.
 */
export const emailSends = pgTable("email_sends", {
  id: text("id").primaryKey(),
  runId: text("run_id").notNull().references(() => runs.id, { onDelete: "cascade" }),
  nodeId: text("node_id").notNull(),
  itemIndex: integer("item_index").notNull(),
  accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
  to: text("to").notNull(),
  subject: text("subject").notNull(),
  status: text("status").$type<EmailSendStatus>().notNull().default("pending"),
  providerMessageId: text("provider_message_id"),
  error: text("error"),
  /** A preview's rendered body (preview items carry `body`); null for live emails. */
  body: text("body"),
  format: text("format").$type<"text" | "html">(),
  createdAt: createdAt(),
  sentAt: ts("sent_at"),
  /**
   * A shared provider call's idempotency key (migration 0013, lib/nodes/output/shared-send.ts): set before the call on
   * every row in it; a resume sends that whole call again. Null for emails sent in their own run's batches.
   */
  sendKey: text("send_key"),
  /** With `sendKey`: `{"pos":n,"email":{…}}`, the email exactly as it went in the call (text, so key order is kept). */
  sendPayload: text("send_payload"),
}, (t) => [
  uniqueIndex("email_sends_run_node_item_key").on(t.runId, t.nodeId, t.itemIndex),
  index("email_sends_account_day_idx").on(t.accountId, t.createdAt),
  index("email_sends_send_key_idx").on(t.sendKey).where(sql`${t.sendKey} is not null`),
  // No index may cover a column that marking a batch sent changes (status, sent_at, provider_message_id, error): those
  // updates stay heap-only, with the table's fillfactor 45 (migration 0010) leaving each page room for them.
]);

/** The Resend event webhook's way from a provider message id to the email (written when the batch is marked sent). */
export const emailProviderIds = pgTable("email_provider_ids", {
  providerMessageId: text("provider_message_id").primaryKey(),
  emailId: text("email_id").notNull(),
});

/**
 * How many ledger rows each account recorded pending per UTC day: an upper bound of what the daily quota counts, read
 * before the exact count (lib/engine/pg/send-ledger.ts, which adds to it in every statement that inserts ledger rows), one
 * row per (account, day, slot) so that concurrent inserts of one account do not wait on one row; never decremented.
 */
export const emailQuotaCounts = pgTable("email_quota_counts", {
  accountId: text("account_id").notNull(),
  day: date("day").notNull(),
  slot: smallint("slot").notNull(),
  n: integer("n").notNull(),
}, (t) => [primaryKey({ name: "email_quota_counts_pk", columns: [t.accountId, t.day, t.slot] })]);

/**
 * How many ledger rows of an OUTPUT node (by ledger run) were marked sent by markSent, added in the same statement
 * (lib/engine/pg/send-ledger.ts): the node's progress `sent` without counting its ledger. One row per (run, node, slot)
 * so that concurrent batches do not wait on one row (migration 0012).
 */
export const nodeSentCounts = pgTable("node_sent_counts", {
  runId: text("run_id").notNull().references(() => runs.id, { onDelete: "cascade" }),
  nodeId: text("node_id").notNull(),
  slot: smallint("slot").notNull(),
  n: integer("n").notNull(),
}, (t) => [primaryKey({ name: "node_sent_counts_pk", columns: [t.runId, t.nodeId, t.slot] })]);


export const idempotencyKeys = pgTable("idempotency_keys", {
  accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
  scope: text("scope").notNull(),
  key: text("key").notNull(),
  resourceId: text("resource_id").notNull(),
  createdAt: createdAt(),
}, (t) => [primaryKey({ columns: [t.accountId, t.scope, t.key] })]);

export const rateLimits = pgTable("rate_limits", {
  key: text("key").notNull(),
  windowStart: bigint("window_start", { mode: "number" }).notNull(),
  count: integer("count").notNull().default(0),
}, (t) => [primaryKey({ columns: [t.key, t.windowStart] })]);
