import { boolean, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { accounts } from "./accounts";
import { createdAt, ts } from "./columns";
import { runs } from "./runs";

export type AiItemStatus = "pending" | "done" | "failed" | "skipped";

/**
 * The answer ledger of AI nodes with `forEach` (and of single calls, as item 0): one row per (ledger run, node, item),
 * the ledger run being the first run of a retry chain. `requestHash` names the request asked; an answer recorded for
 * the same hash is never asked again (lib/engine/pg/answer-ledger.ts).
 */
export const aiItems = pgTable("ai_items", {
  runId: text("run_id").notNull().references(() => runs.id, { onDelete: "cascade" }),
  nodeId: text("node_id").notNull(),
  itemIndex: integer("item_index").notNull(),
  accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
  requestHash: text("request_hash").notNull(),
  status: text("status").$type<AiItemStatus>().notNull().default("pending"),
  output: jsonb("output").$type<Record<string, unknown>>(),
  error: text("error"),
  inputTokens: integer("input_tokens"),
  outputTokens: integer("output_tokens"),
  costUsd: doublePrecision("cost_usd"),
  /** Answered by an identical earlier request of the account (`reuseAnswersDays`), not asked. */
  reused: boolean("reused").notNull().default(false),
  createdAt: createdAt(),
  answeredAt: ts("answered_at"),
}, (t) => [
  primaryKey({ columns: [t.runId, t.nodeId, t.itemIndex], name: "ai_items_pkey" }),
  index("ai_items_run_node_status_idx").on(t.runId, t.nodeId, t.status, t.itemIndex),
  index("ai_items_reuse_idx").on(t.accountId, t.requestHash, t.answeredAt).where(sql`status = 'done'`),
]);

/** The limiter shared by every model call with one provider key (a hash of the key): lib/ai/limiter.ts. */
export const aiPacing = pgTable("ai_pacing", {
  key: text("key").primaryKey(),
  /** The earliest start of the next request (requestsPerMinute). */
  nextAt: ts("next_at").notNull().defaultNow(),
  /** The token budget's schedule (tokensPerMinute): moves on by each call's tokens. */
  tokenAt: ts("token_at").notNull().defaultNow(),
  /** Nobody calls before this (a 429's retry-after, a rate-limit reset). */
  holdUntil: ts("hold_until").notNull().defaultNow(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

/** Calls in flight per provider key: a leased row each, at most maxConcurrency slots (lib/ai/limiter.ts). */
export const aiInflight = pgTable("ai_inflight", {
  key: text("key").notNull(),
  slot: integer("slot").notNull(),
  leaseUntil: ts("lease_until").notNull().defaultNow(),
}, (t) => [primaryKey({ columns: [t.key, t.slot], name: "ai_inflight_pkey" })]);

export type AiBatchState = "submitting" | "running" | "collected" | "cancelled" | "abandoned";

/**
 * The provider batches of AI nodes in batch mode (lib/ai/batch/store.ts): written before the submission and given
 * the provider's id right after, so whichever process holds the run polls the same batch after a restart.
 */
export const aiBatches = pgTable("ai_batches", {
  runId: text("run_id").notNull().references(() => runs.id, { onDelete: "cascade" }),
  nodeId: text("node_id").notNull(),
  seq: integer("seq").notNull(),
  accountId: text("account_id").notNull().references(() => accounts.id, { onDelete: "cascade" }),
  provider: text("provider").notNull(),
  batchId: text("batch_id"),
  state: text("state").$type<AiBatchState>().notNull().default("submitting"),
  /** The submitted items and their request hashes: [[index, hash], …]. */
  items: jsonb("items").$type<[number, string][]>().notNull(),
  itemCount: integer("item_count").notNull(),
  createdAt: createdAt(),
  polledAt: ts("polled_at"),
  endedAt: ts("ended_at"),
  /** A row without its batch id is looked up at the provider only after this (its submission may be under way). */
  submittingUntil: ts("submitting_until"),
}, (t) => [
  primaryKey({ columns: [t.runId, t.nodeId, t.seq], name: "ai_batches_pkey" }),
  index("ai_batches_account_batch_idx").on(t.accountId, t.batchId).where(sql`batch_id is not null`),
]);
