// The per-item ledgers' shapes (OUTPUT's send ledger, the AI node's answer ledger): items keyed by the run chain, the
// node and the item index. Shared by the node ports (lib/nodes/ports.ts) and the PostgreSQL ledgers (lib/engine/pg/):
// types only, so neither imports the other.

/**
 * An email's state in the send ledger. `sending`: an SMTP or SES email whose call is under way (recorded before the
 * call; those providers have no idempotency key); `unknown`: one found still `sending` when its node resumed — it may
 * or may not have been delivered, and is not sent again unless a person asks (POST …/resend-unknown).
 */
export type EmailSendStatus = "pending" | "sent" | "suppressed" | "duplicate" | "failed" | "preview" | "sending" | "unknown";

/**
 * A send-ledger key: one row per (ledger run, node, item), the exactly-once guard and the per-email record of a run.
 * `chainRunId` is the first run of the retry chain (the run itself when it is not a retry): a retry never re-sends
 * what its chain sent, nor asks again what its chain's AI nodes were answered.
 */
export type LedgerKey = {
  /** The first run of the retry chain: the rows' `run_id`. */
  chainRunId: string;
  nodeId: string;
  accountId: string;
  /**
   * What an execution of the node sends again of its ledger rows: by default what an earlier attempt left unsent
   * (failed, pending); `unknown` (a resend-unknown run): only the emails whose fate a crash left unknown.
   */
  reopen?: "unknown";
};

export type LedgerEmail = {
  itemIndex: number;
  to: string;
  subject: string;
  status: Extract<EmailSendStatus, "pending" | "duplicate" | "preview">;
  body?: string;
  format?: "text" | "html";
};

export type StatusCounts = Record<EmailSendStatus, number>;

/** A row of a shared provider call: which email of which run, and the email exactly as it went in the call (JSON). */
export type SharedRow = { runId: string; nodeId: string; itemIndex: number; payload: string };
export type SharedRowRef = Omit<SharedRow, "payload">;

/** An AI item's state in the answer ledger. */
export type AnswerStatus = "pending" | "done" | "failed" | "skipped";

/** One item's row of the answer ledger. */
export type AnswerRow = {
  itemIndex: number;
  status: AnswerStatus;
  output: Record<string, unknown> | null;
  error: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  costUsd: number | null;
  reused: boolean;
};

/** What a node's items cost so far: paid calls only (a reused answer costs nothing); `costUsd` null when unpriced. */
export type AnswerTotals = {
  counts: Record<AnswerStatus, number>;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
};

/** A recorded answer (or a failure) of one item, for the request of hash `hash`. */
export type AnswerRecord = {
  itemIndex: number;
  hash: string;
  output?: Record<string, unknown>;
  error?: string;
  inputTokens?: number;
  outputTokens?: number;
  costUsd?: number | null;
  /** The execution run whose node row's `progress.done` this settle moves on (the node shows progress). */
  progressRunId?: string;
};
