import "server-only";
import type { Db } from "@/db/client";
import { findUpload, findUploadWithRows, readUploadRows } from "@/db/queries/upload-rows";
import { loadAiSettings } from "@/lib/ai/settings";
import { acquireSendSlot, reportRateLimit, slotStatement } from "@/lib/email/pacing";
import * as ledger from "@/db/queries/send-ledger";
import type { NodePorts } from "@/lib/nodes/ports";

/**
 * The node ports on PostgreSQL (or PGlite): what DATA_SOURCE, AI and OUTPUT reach, bound to one database. `inline`:
 * a node's steps all run in this process one after the other (the embedded executor), so the first batch's send slot
 * may be taken with the ledger rows (under Inngest the batch may run elsewhere, and the slot would go unused).
 */
export function pgNodePorts(db: Db, options: { inline?: boolean } = {}): NodePorts {
  return {
    uploads: {
      find: (accountId, uploadId) => findUpload(db, accountId, uploadId),
      readRows: (upload, offset, limit) => readUploadRows(db, upload, offset, limit),
      findWithRows: (accountId, uploadId) => findUploadWithRows(db, accountId, uploadId),
    },
    aiSettings: (accountId) => loadAiSettings(db, accountId),
    ledger: {
      recordEmails: (key, emails, options) => ledger.recordEmails(db, key, emails, options),
      // The batch sends right after in the same step, wherever it runs: its slot can always be taken with its rows.
      pendingInRange: (key, execRunId, from, to, slot) =>
        ledger.pendingInRange(db, key, execRunId, from, to, slot ? (when) => slotStatement(slot.key, slot.ratePerSecond, when) : undefined),
      markSent: (key, execRunId, sent) => ledger.markSent(db, key, execRunId, sent),
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
    },
    pacing: {
      acquire: (key, rate, shouldStop) => acquireSendSlot(db, key, rate, shouldStop),
      report: (key, rate, info, status) => reportRateLimit(db, key, rate, info, status),
    },
  };
}
