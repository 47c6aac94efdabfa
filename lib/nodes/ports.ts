// What node executors may reach outside the run: a narrow set of ports instead of the database. The engine
// hands each node a runtime holding these (lib/engine/pg-node-ports.ts binds them to PostgreSQL); unit tests pass
// in-memory ones. Type-only imports: nothing here touches a database.
import type { AiSettings } from "@/lib/ai/settings";
import type { AiBatchStore } from "@/lib/ai/batch/store";
import type { EmailSender, RateLimitInfo } from "@/lib/email/types";
import type {
  AnswerRecord,
  AnswerRow,
  AnswerStatus,
  AnswerTotals,
  EmailSendStatus,
  LedgerEmail,
  LedgerKey,
  SharedRow,
  SharedRowRef,
  StatusCounts,
} from "@/lib/ledgers/types";

export type { AnswerRecord, AnswerRow, AnswerStatus, AnswerTotals, EmailSendStatus, LedgerEmail, LedgerKey, SharedRow, SharedRowRef, StatusCounts };

export type UploadRef = { id: string; columns: string[]; rowCount: number };

/** The account's uploaded CSVs (DATA_SOURCE). */
export interface UploadReader {
  /** The upload if it exists, is not deleted and belongs to the account. */
  find(accountId: string, uploadId: string): Promise<UploadRef | undefined>;
  /** Rows [offset, offset + limit) in file order. */
  readRows(upload: UploadRef, offset: number, limit: number): Promise<Record<string, string>[]>;
  /** Optional (one round trip instead of two): `find`, and every row when the port reads them with it. */
  findWithRows?(accountId: string, uploadId: string): Promise<{ upload: UploadRef; rows?: Record<string, string>[] } | undefined>;
}

/** The account's linked Google Drive (DATA_SOURCE with a Drive file). */
export interface DriveReader {
  /**
   * The file's rows as CSV (a Sheet exported), under the upload rules and size limit. A refusal (link expired, file
   * not found, not a CSV, too large) is a NodeError whose message is the node's sentence.
   */
  readRows(accountId: string, fileId: string): Promise<{ columns: string[]; rows: Record<string, string>[] }>;
}

/** The send ledger (OUTPUT): one record per email, the exactly-once guard (PostgreSQL: lib/engine/pg/send-ledger.ts). */
export interface SendLedger {
  /**
   * Records every email of the node (idempotent per item); emails an earlier attempt of the chain left unsent (a retry,
   * a resume) become pending again, suppressed ones skipped (`reopen: false`: not, for the later parts of a node's
   * emails, recorded after the first).
   */
  recordEmails(key: LedgerKey, emails: LedgerEmail[], options?: { reopen?: boolean }): Promise<void>;
  /**
   * The pending emails of items [from, to) (suppressed ones skipped) and the node's start; with `slot`, the batch's send
   * slot is taken in the same round trip when the range has an email to send (`slotWaitMs`: from now until it starts).
   */
  pendingInRange(
    key: LedgerKey,
    execRunId: string,
    from: number,
    to: number,
    slot?: { key: string; ratePerSecond: number },
  ): Promise<{ indexes: number[]; startedAtMs: number | null; slotWaitMs?: number; inflight?: string[] }>;
  /** Marks a delivered batch sent; the node's progress follows (at most every PROGRESS_INTERVAL_MS on PostgreSQL). */
  markSent(key: LedgerKey, execRunId: string, sent: { itemIndex: number; providerId: string }[]): Promise<void>;
  /** Counts by status, written as the node's progress. */
  writeProgress(key: LedgerKey, execRunId: string): Promise<StatusCounts>;
  markUnsentFailed(key: LedgerKey, error: string): Promise<void>;
  countByStatus(ledgerRunId: string, nodeId: string): Promise<StatusCounts>;
  /** Today's workflow emails of the account (this node's apart) and this node's pending ones; sets its progress. */
  beginSending(key: LedgerKey, execRunId: string): Promise<{ usedToday: number; thisNode: number }>;
  /**
   * Optional (fewer round trips): recordEmails then beginSending, and the first batch's pending emails
   * (`first`, as pendingInRange(0, firstTo) answers) and send slot (`slotWaitMs`, taken for `slot` only when that batch
   * has an email and the daily `quota` allows the node's emails) when the port can read them with the rest.
   * `progressTotal`: the total written in the node's progress (`emails` are the first part of the node's, whose
   * pending count is not known yet), instead of the count of its pending and sent emails.
   */
  recordAndBegin?(
    key: LedgerKey,
    execRunId: string,
    emails: LedgerEmail[],
    options: { firstTo: number; quota: number; slot?: { key: string; ratePerSecond: number }; progressTotal?: number },
  ): Promise<{
    usedToday: number;
    thisNode: number;
    /** `fresh`: every row of the first batch was inserted by this call (no attempt before this one could have sent it). */
    first?: { indexes: number[]; startedAtMs: number | null; inflight?: string[]; fresh?: boolean };
    slotWaitMs?: number;
  }>;
  /** Optional: markSent then writeProgress (the node's last batch). */
  markSentAndCount?(key: LedgerKey, execRunId: string, sent: { itemIndex: number; providerId: string }[]): Promise<StatusCounts>;
  /**
   * Optional: provider calls shared by the small batches of several runs (lib/nodes/output/shared-send.ts). Without it
   * each batch is its own call. `pendingInRange` and `recordAndBegin` leave a shared call's pending rows out of their
   * indexes and name the call in `inflight` instead: it is sent again whole, under its key.
   */
  shared?: SharedSends;
  /** Optional: the ledger of transports without an idempotency key (SMTP, SES); required to send through them. */
  each?: EachLedger;
}

/** Each email of an SMTP or SES sender is recorded `sending` before its call (lib/engine/pg/send-ledger-each.ts). */
export interface EachLedger {
  /** Marks the pending rows among `indexes` `sending`; answers those (only they may go). */
  begin(key: LedgerKey, indexes: number[]): Promise<number[]>;
  /** After the calls: refused emails `failed` with the provider's sentence; `unsent` (their call never went) pending again. */
  settle(key: LedgerKey, refused: { itemIndex: number; error: string }[], unsent: number[]): Promise<void>;
  /** Rows of items [from, to) still `sending` from an earlier attempt become `unknown` (never sent again); how many. */
  settleUnknown(key: LedgerKey, from: number, to: number): Promise<number>;
}

export interface SharedSends {
  /** Gives the call's key and payloads to the rows still pending and in no call; answers those (only they may go). */
  claim(sendKey: string, rows: SharedRow[]): Promise<SharedRowRef[]>;
  /** Every row of the call, whatever its status now. */
  rows(sendKey: string): Promise<(SharedRow & { status: EmailSendStatus })[]>;
  /**
   * After the call: its rows not yet sent marked sent, and for each of `nodes` (a run's node whose whole batch was in
   * the call) its ledger counts by status after that, written as its run's node progress `{ sent, total }` — one
   * statement for every run in the call. Counts in the order of `nodes`; none for a call sent again on a resume.
   */
  markSentAndCount(
    sendKey: string,
    sent: (SharedRowRef & { providerId: string })[],
    nodes: { runId: string; nodeId: string; execRunId: string }[],
  ): Promise<StatusCounts[]>;
  /** The provider refused the call outright: its rows leave it (each run sends them again alone). */
  release(sendKey: string): Promise<void>;
}

/** The provider rate limit shared by every sender of a key (lib/email/pacing.ts). */
export interface SendPacing {
  /** Waits for a send slot; false when `shouldStop` said stop while waiting. */
  acquire(key: string, ratePerSecond: number, shouldStop?: () => Promise<boolean>): Promise<boolean>;
  /** Feeds a provider answer's rate-limit headers (or a 429) back to the limiter. */
  report(key: string, ratePerSecond: number, info: RateLimitInfo | undefined, status?: number | null): Promise<void>;
  /**
   * Optional: `n` consecutive slots in one round trip — the first starts in `waitMs`, the next every `spacingMs` (`margin`
   * times 1/rate; the limiter's own margin unless given).
   */
  reserve?(key: string, ratePerSecond: number, n: number, margin?: number): Promise<{ waitMs: number; spacingMs: number }>;
}

/** The transport an OUTPUT node sends through, with its pace and daily quota. */
export type ResolvedSender = {
  sender: EmailSender;
  /** Provider calls (Resend) or emails (SMTP, SES) per second on the sender's shared limiter. */
  ratePerSecond: number;
  /** Emails per UTC day through this sender's provider account (its limiter key); none when unset. */
  dailyQuota?: number;
  /** The account's sender (`snd_…`); undefined for the deployment's transport. */
  senderId?: string;
  /** How sentences name the provider ("Amazon SES", "The SMTP server"). */
  label: string;
};

/** Which transport an OUTPUT node uses: its `senderId`, else the account's default sender, else the deployment's. */
export interface SenderPort {
  /**
   * `fixedDefault`: for a node without a senderId, the default sender recorded on the run (null: the deployment's
   * transport); undefined: the account's default sender now.
   */
  resolve(accountId: string, senderId?: string, fixedDefault?: string | null): Promise<ResolvedSender>;
  /** Takes `n` emails of the key's daily quota; false (none taken) when they do not fit today. */
  takeDaily?(key: string, quota: number, n: number): Promise<boolean>;
  /** Notes a refusal of the sender itself (or null after a success) on the sender, for its settings page. */
  noteError?(senderId: string, error: string | null): Promise<void>;
}

/**
 * The answer ledger (AI): one record per (ledger run, node, item) with the hash of the request asked, so a resumed or
 * retried node never asks again for an item answered with the same hash (PostgreSQL: lib/engine/pg/answer-ledger.ts).
 * The key is the send ledger's: `chainRunId` is the first run of the retry chain.
 */
export interface AnswerLedger {
  /**
   * Records every item's request (idempotent per item): an item whose hash changed, or that failed or was skipped in an
   * earlier attempt, becomes pending again; `reuseDays`: a pending item whose identical request the account had
   * answered within that many days takes that answer (reused, no cost).
   */
  record(key: LedgerKey, requests: { itemIndex: number; hash: string }[], options?: { reuseDays?: number }): Promise<void>;
  /** Indexes of the pending items in [from, to). */
  pending(key: LedgerKey, from: number, to: number): Promise<number[]>;
  /** An answer (with `output`) or a failure (with `error`), recorded only while the item's hash is still `hash`. */
  settle(key: LedgerKey, record: AnswerRecord): Promise<void>;
  /** Items still pending become skipped (the node stopped: cap, quota, a failed item). */
  skipPending(key: LedgerKey, error: string): Promise<void>;
  totals(key: LedgerKey): Promise<AnswerTotals>;
  /** USD recorded so far for the node's items, and for every AI node's items of the ledger run (the spend caps). */
  spent(key: LedgerKey): Promise<{ node: number; run: number }>;
  /** Rows of items [from, to), in order. */
  read(key: LedgerKey, from: number, to: number): Promise<AnswerRow[]>;
  /** The running node's `progress: { done, total }`. */
  writeProgress(execRunId: string, nodeId: string, progress: { done: number; total: number }): Promise<void>;
}

/** The pacing of one provider key: the account's AI settings (null: not set). */
export type AiCallLimits = { requestsPerMinute: number | null; tokensPerMinute: number | null; maxConcurrency: number };

/** What a finished call tells the limiter: real minus estimated tokens, and what the provider's headers asked for. */
export type AiFeedback = { tokenDelta: number; holdMs?: number; spacingMs?: number };

export type AiSlot = { kind: "ok"; slot: number } | { kind: "stopped" } | { kind: "deadline" };

/** The model-call limiter shared by every call with one provider key (PostgreSQL: lib/ai/limiter.ts). */
export interface AiLimiter {
  /** Waits for an in-flight slot and the call's start on the key's schedule (see AiSlot). */
  acquire(key: string, limits: AiCallLimits, tokens: number, opts: { deadline: number; halted: () => boolean }): Promise<AiSlot>;
  release(key: string, slot: number, limits: AiCallLimits, feedback: AiFeedback): Promise<void>;
  /** How long a node keeps waiting out 429s, 5xx answers and timeouts (AI_BUDGET_MINUTES). */
  budgetMinutes: number;
}

/** The deployment's sending limits an OUTPUT node keeps to. */
export type SendLimits = {
  /** Workflow emails per account and UTC day (EMAIL_DAILY_QUOTA). */
  readonly dailyQuota: number;
  /** How long a node keeps retrying a failing provider (EMAIL_SEND_BUDGET_MINUTES). */
  readonly budgetMinutes: number;
  /** Ledger rows per statement while a node records its emails (a node with more sends while it records the rest). */
  readonly ledgerChunk: number;
};

export interface NodePorts {
  uploads: UploadReader;
  drive: DriveReader;
  /** The account's AI provider settings with the key decrypted, or null when none is configured. */
  aiSettings(accountId: string): Promise<AiSettings | null>;
  ledger: SendLedger;
  pacing: SendPacing;
  /** The AI node's answer ledger. */
  answers: AnswerLedger;
  /** The model-call limiter. */
  aiLimiter: AiLimiter;
  /** Which transport an OUTPUT node sends through (the deployment's when neither the node nor the account names one). */
  senders: SenderPort;
  sendLimits: SendLimits;
  /** Optional: the AI node's provider batches (batch mode); without it they are kept in the process's database. */
  aiBatches?: AiBatchStore;
}
