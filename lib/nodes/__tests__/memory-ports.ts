import type { EmailSender, OutgoingEmail, SendResult } from "@/lib/email/types";
import type { LedgerEmail, LedgerKey, NodePorts, SendLedger, SendLimits, StatusCounts } from "../ports";
import { unavailablePorts } from "./fake-runtime";

// In-memory ports for OUTPUT's unit tests: the send ledger's rules (what is recorded, reopened, suppressed, counted
// against the daily quota) as the PostgreSQL ledger (lib/engine/pg/send-ledger.ts) keeps them, in maps. Only the required
// methods of SendLedger: a node on these ports records, reads and marks its emails one call at a time.

type EmailSendStatus = keyof StatusCounts;
type Row = { accountId: string; to: string; subject: string; status: EmailSendStatus; error: string | null; providerId: string | null };

const emptyCounts = (): StatusCounts => ({ pending: 0, sent: 0, suppressed: 0, duplicate: 0, failed: 0, preview: 0, sending: 0, unknown: 0 });

export class MemorySendLedger implements SendLedger {
  /** Rows by ledger run and node, then by item index. */
  readonly rows = new Map<string, Map<number, Row>>();
  /** Suppressed addresses by account. */
  readonly suppressions = new Map<string, Set<string>>();
  /** Workflow emails the account sent today before this test's nodes (the daily quota counts them). */
  readonly sentTodayElsewhere = new Map<string, number>();
  /** The node's progress `{ sent, total }` by execution run and node. */
  readonly progress = new Map<string, { sent: number; total: number }>();

  suppress(accountId: string, email: string): void {
    let set = this.suppressions.get(accountId);
    if (!set) this.suppressions.set(accountId, (set = new Set()));
    set.add(email);
  }

  private node(key: { chainRunId: string; nodeId: string }): Map<number, Row> {
    const id = `${key.chainRunId}:${key.nodeId}`;
    let rows = this.rows.get(id);
    if (!rows) this.rows.set(id, (rows = new Map()));
    return rows;
  }

  private suppressed(accountId: string, email: string): boolean {
    return this.suppressions.get(accountId)?.has(email) ?? false;
  }

  async recordEmails(key: LedgerKey, emails: LedgerEmail[], options: { reopen?: boolean } = {}): Promise<void> {
    const rows = this.node(key);
    // An execution of the node again (a retry chain, a resume) reopens what an earlier attempt left unsent.
    if (options.reopen !== false) {
      const reopened: EmailSendStatus[] = key.reopen === "unknown" ? ["unknown", "pending"] : ["failed", "pending"];
      for (const row of rows.values()) {
        if (!reopened.includes(row.status)) continue;
        row.status = this.suppressed(key.accountId, row.to) ? "suppressed" : "pending";
        row.error = null;
      }
    }
    for (const e of emails) {
      if (rows.has(e.itemIndex)) continue; // idempotent per item
      const status = e.status !== "duplicate" && this.suppressed(key.accountId, e.to) ? "suppressed" : e.status;
      rows.set(e.itemIndex, { accountId: key.accountId, to: e.to, subject: e.subject, status, error: null, providerId: null });
    }
  }

  async pendingInRange(key: LedgerKey, _execRunId: string, from: number, to: number): Promise<{ indexes: number[]; startedAtMs: number | null }> {
    const indexes: number[] = [];
    for (const [i, row] of this.node(key)) {
      if (i < from || i >= to || row.status !== "pending") continue;
      // The suppression list is checked again at send time: an unsubscribe during a long run counts.
      if (this.suppressed(key.accountId, row.to)) row.status = "suppressed";
      else indexes.push(i);
    }
    return { indexes: indexes.sort((a, b) => a - b), startedAtMs: null };
  }

  async markSent(key: LedgerKey, execRunId: string, sent: { itemIndex: number; providerId: string }[]): Promise<void> {
    const rows = this.node(key);
    for (const { itemIndex, providerId } of sent) {
      const row = rows.get(itemIndex);
      if (row && row.status !== "sent") Object.assign(row, { status: "sent", providerId });
    }
    this.writeProgressOf(key, execRunId);
  }

  async writeProgress(key: LedgerKey, execRunId: string): Promise<StatusCounts> {
    return this.writeProgressOf(key, execRunId);
  }

  private writeProgressOf(key: LedgerKey, execRunId: string): StatusCounts {
    const counts = this.counts(key.chainRunId, key.nodeId);
    this.progress.set(`${execRunId}:${key.nodeId}`, { sent: counts.sent, total: counts.sent + counts.pending });
    return counts;
  }

  async markUnsentFailed(key: LedgerKey, error: string): Promise<void> {
    for (const row of this.node(key).values()) if (row.status === "pending") Object.assign(row, { status: "failed", error });
  }

  async countByStatus(ledgerRunId: string, nodeId: string): Promise<StatusCounts> {
    return this.counts(ledgerRunId, nodeId);
  }

  counts(ledgerRunId: string, nodeId: string): StatusCounts {
    const counts = emptyCounts();
    for (const row of this.node({ chainRunId: ledgerRunId, nodeId }).values()) counts[row.status]++;
    return counts;
  }

  async beginSending(key: LedgerKey, execRunId: string): Promise<{ usedToday: number; thisNode: number }> {
    const { pending: thisNode } = this.writeProgressOf(key, execRunId);
    if (thisNode === 0) return { usedToday: 0, thisNode };
    // What the daily quota counts: the account's workflow emails sent or about to be sent, this node's apart.
    let usedToday = this.sentTodayElsewhere.get(key.accountId) ?? 0;
    const self = `${key.chainRunId}:${key.nodeId}`;
    for (const [id, rows] of this.rows) {
      if (id === self) continue;
      for (const row of rows.values()) if (row.accountId === key.accountId && ["pending", "sent", "sending", "unknown"].includes(row.status)) usedToday++;
    }
    return { usedToday, thisNode };
  }

  /** The row of an item (its status, error and provider id). */
  row(key: { chainRunId: string; nodeId: string }, itemIndex: number): Row | undefined {
    return this.node(key).get(itemIndex);
  }
}

/** A provider that keeps every accepted call; `fail(attempt)` may refuse an attempt (1-based, refused ones included). */
export class RecordingSender implements EmailSender {
  readonly name = "resend" as const;
  readonly calls: { emails: OutgoingEmail[]; batchKey?: string }[] = [];
  attempts = 0;
  constructor(private readonly fail?: (attempt: number, emails: OutgoingEmail[]) => Error | undefined) {}

  async send(email: OutgoingEmail): Promise<SendResult> {
    const [result] = await this.sendBatch([email]);
    return result;
  }

  async sendBatch(emails: OutgoingEmail[], batchKey?: string): Promise<SendResult[]> {
    const error = this.fail?.(++this.attempts, emails);
    if (error) throw error;
    const call = this.calls.length + 1;
    this.calls.push({ emails, batchKey });
    return emails.map((_, k) => ({ id: `msg_${call}_${k}` }));
  }

  /** Every address the provider accepted, in order. */
  get delivered(): string[] {
    return this.calls.flatMap((c) => c.emails.map((e) => e.to));
  }
}

/**
 * The node ports of an OUTPUT unit test: the in-memory ledger, a provider that records its calls (never paced: it has
 * no limiter key), and the deployment's limits (overridable).
 */
export function memoryOutputPorts(
  ledger: MemorySendLedger,
  sender: EmailSender,
  limits: Partial<SendLimits> = {},
): NodePorts {
  return {
    ...unavailablePorts,
    ledger,
    senders: { resolve: async () => ({ sender, ratePerSecond: 1_000, label: "Resend" }) },
    pacing: { acquire: async () => true, report: async () => {} },
    sendLimits: { dailyQuota: 10_000, budgetMinutes: 1, ledgerChunk: 500, ...limits },
  };
}
