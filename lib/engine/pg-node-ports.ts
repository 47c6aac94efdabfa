import "server-only";
import type { Db } from "@/db/client";
import { findUpload, findUploadWithRows, readUploadRows, type UploadPrefetch } from "@/db/queries/upload-rows";
import { acquireAiCall, releaseAiCall } from "@/lib/ai/limiter";
import { loadAiSettings } from "@/lib/ai/settings";
import { getConfig } from "@/lib/config";
import { acquireSendSlot, reportRateLimit, slotStatement, takeSlots } from "@/lib/email/pacing";
import { metrics } from "@/lib/observability/metrics";
import * as ledger from "@/lib/engine/pg/send-ledger";
import * as each from "@/lib/engine/pg/send-ledger-each";
import * as answers from "@/lib/engine/pg/answer-ledger";
import { runMemory } from "./pg/run-memory";
import { noteSenderError, resolveSender } from "@/lib/services/senders/resolve-sender";
import { loadDriveFileRows } from "@/lib/google/drive-rows";
import { AppError } from "@/lib/errors";
import { log } from "@/lib/log";
import type { NodePorts } from "@/lib/nodes/ports";
import { pgBatchStore } from "@/lib/ai/batch/store";
import { NodeError } from "@/lib/nodes/types";

/** A running OUTPUT node's progress is written at most this often (the canvas polls about once a second). */
export const PROGRESS_INTERVAL_MS = 250;

/**
 * Ledger rows per statement while an OUTPUT node records its emails. A node with more emails records the first rows,
 * then sends its first batches while the rest are recorded, when the daily quota surely allows every email. Half as
 * many on the embedded PGlite: its one connection runs a statement at a time, and a request's statement waits for the
 * one being executed, while on PostgreSQL more statements of the same rows cost a large node time.
 */
export function ledgerChunk(): number {
  return getConfig().databaseUrl ? 1000 : 500;
}

/**
 * The node ports on PostgreSQL (or PGlite): what DATA_SOURCE, AI and OUTPUT reach, bound to one database. `inline`:
 * a node's steps all run in this process one after the other (the embedded executor), so the first batch's send slot
 * may be taken with the ledger rows (under Inngest the batch may run elsewhere, and the slot would go unused).
 * `volatileDb`: where the statements whose writes may be lost in a crash of the database server itself go — a batch's
 * pending read (its send slot, and the send-time suppression marks, which the next read makes again) and the shared
 * limiter's slots and holds — so they do not wait for a WAL flush (db/client.ts's run-state pool: 2–5 ms per commit
 * on this VM's disk, four times per batch-lane round trip). What is sent, and every ledger row, stays on `db`.
 * `uploadPrefetch`: the uploads the claim of the run being executed read (the embedded executor's job; see PgRunStore).
 */
export function pgNodePorts(db: Db, options: { inline?: boolean; volatileDb?: Db; uploadPrefetch?: UploadPrefetch } = {}): NodePorts {
  const prefetch = options.uploadPrefetch;
  const volatile = options.volatileDb ?? db;
  // Progress writes are throttled per node for the whole process (an Inngest step's ports are new), forgotten with the run.
  const memory = runMemory();
  return {
    uploads: {
      find: (accountId, uploadId) => findUpload(db, accountId, uploadId),
      readRows: (upload, offset, limit) => readUploadRows(db, upload, offset, limit),
      findWithRows: async (accountId, uploadId) => prefetch?.find(accountId, uploadId) ?? findUploadWithRows(db, accountId, uploadId),
    },
    // The Drive adapter's refusals are sentences for people (link expired, file not found, not a CSV): the node's error.
    drive: {
      readRows: (accountId, fileId) =>
        loadDriveFileRows(accountId, fileId).catch((error: unknown) => {
          throw error instanceof AppError ? new NodeError(error.message, { cause: error }) : error;
        }),
    },
    aiSettings: (accountId) => loadAiSettings(db, accountId),
    ledger: {
      recordEmails: (key, emails, options) => ledger.recordEmails(db, key, emails, options),
      // The batch sends right after in the same step, wherever it runs: its slot can always be taken with its rows.
      pendingInRange: (key, execRunId, from, to, slot) =>
        ledger.pendingInRange(volatile, key, execRunId, from, to, slot ? (when) => slotStatement(slot.key, slot.ratePerSecond, when) : undefined),
      markSent: async (key, execRunId, sent) => {
        await ledger.markSent(db, key, sent);
        // Progress is what the canvas shows, never what is sent: a failed write waits for the next one (or the node's end).
        if (memory.progressDue(execRunId, key.nodeId, PROGRESS_INTERVAL_MS)) {
          await ledger.writeSentProgress(volatile, key, execRunId).catch((error) => log.warn("could not write a node's send progress", { runId: execRunId, error }));
        }
      },
      writeProgress: (key, execRunId) => ledger.writeProgress(db, key, execRunId),
      markUnsentFailed: (key, error) => ledger.markUnsentFailed(db, key, error),
      countByStatus: (ledgerRunId, nodeId) => ledger.countByStatus(db, ledgerRunId, nodeId),
      beginSending: (key, execRunId) => ledger.beginSending(db, key, execRunId),
      recordAndBegin: (key, execRunId, emails, { firstTo, quota, slot, progressTotal }) =>
        ledger.recordAndBegin(db, key, execRunId, emails, {
          firstTo,
          quota,
          progressTotal,
          slot: options.inline && slot ? (when) => slotStatement(slot.key, slot.ratePerSecond, when) : undefined,
        }),
      markSentAndCount: (key, execRunId, sent) => ledger.markSentAndCount(db, key, execRunId, sent),
      shared: {
        claim: (sendKey, rows) => ledger.claimSharedSend(db, sendKey, rows),
        rows: (sendKey) => ledger.sharedSendRows(db, sendKey),
        markSentAndCount: (sendKey, sent, nodes) => ledger.markSharedSentAndCount(db, sendKey, sent, nodes),
        release: (sendKey) => ledger.releaseSharedSend(db, sendKey),
      },
      each: {
        begin: (key, indexes) => each.beginSendingEach(db, key, indexes),
        settle: (key, refused, unsent) => each.settleEach(db, key, refused, unsent),
        settleUnknown: (key, from, to) => each.settleUnknown(db, key, from, to),
      },
    },
    senders: {
      resolve: (accountId, senderId, fixedDefault) => resolveSender(db, accountId, senderId, fixedDefault),
      takeDaily: (key, quota, n) => each.takeDailyQuota(db, key, quota, n),
      noteError: (senderId, error) => noteSenderError(db, senderId, error),
    },
    sendLimits: {
      get dailyQuota() {
        return getConfig().emailDailyQuota;
      },
      get budgetMinutes() {
        return getConfig().emailSendBudgetMinutes;
      },
      get ledgerChunk() {
        return ledgerChunk();
      },
    },
    pacing: {
      acquire: (key, rate, shouldStop) => metrics.timeSendSlot(acquireSendSlot(volatile, key, rate, shouldStop)),
      report: (key, rate, info, status) => reportRateLimit(volatile, key, rate, info, status),
      reserve: (key, rate, n, margin) => takeSlots(volatile, key, rate, n, margin),
    },
    aiBatches: pgBatchStore(db),
    // The limiter's slots and holds are volatile state, as the email limiter's.
    aiLimiter: {
      acquire: (key, limits, tokens, opts) => acquireAiCall(volatile, key, limits, tokens, opts),
      release: (key, slot, limits, feedback) => releaseAiCall(volatile, key, slot, limits, feedback),
      get budgetMinutes() {
        return getConfig().aiBudgetMinutes;
      },
    },
    answers: {
      record: (key, requests, options) => answers.recordRequests(db, key, requests, options),
      pending: (key, from, to) => answers.pendingItems(db, key, from, to),
      settle: (key, record) => answers.settleItem(db, key, record),
      skipPending: (key, error) => answers.skipPendingItems(db, key, error),
      totals: (key) => answers.answerTotals(db, key),
      spent: (key) => answers.spentSoFar(db, key),
      read: (key, from, to) => answers.readItems(db, key, from, to),
      // Progress is what the canvas shows: a lost write waits for the next one.
      writeProgress: (execRunId, nodeId, progress) =>
        answers.writeAiProgress(volatile, execRunId, nodeId, progress).catch((error) => log.warn("could not write an AI node's progress", { runId: execRunId, error })),
    },
  };
}
