import "server-only";
import { sql } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import type { AiBatchState } from "@/db/schema";
import type { LedgerKey } from "@/lib/nodes/ports";

/** One provider batch of a node, as recorded in `ai_batches`. */
export type BatchRow = {
  seq: number;
  provider: string;
  batchId: string | null;
  state: AiBatchState;
  /** The submitted items and their request hashes. */
  items: [number, string][];
  /** When the row was written (ms since the epoch): its provider batch, if any, was created after it. */
  createdAtMs: number;
  /** A row without its id: whether its submission's call has surely ended (it may then be looked up at the provider). */
  lookupDue: boolean;
};

/**
 * Where batch mode keeps its batches: written before a submission and given the provider's id right after it, so a
 * restart or a takeover polls the same batch instead of submitting again; a row left without its id is looked up at
 * the provider once its submission's call has surely ended (`submitting_until`). PostgreSQL (or PGlite): `pgBatchStore`.
 */
export interface AiBatchStore {
  /** The node's batches not yet finished with (submitting or running), in order. */
  open(key: LedgerKey): Promise<BatchRow[]>;
  /**
   * Records a batch about to be submitted, whose call ends within `callMs`; false when that seq exists (another
   * process got there first).
   */
  begin(key: LedgerKey, row: { seq: number; provider: string; items: [number, string][]; callMs: number }): Promise<boolean>;
  /** The seq the node's next batch takes. */
  nextSeq(key: LedgerKey): Promise<number>;
  /** The provider has the batch (it accepted it, or it was found there): its id. False when the row is no longer submitting. */
  submitted(key: LedgerKey, seq: number, batchId: string): Promise<boolean>;
  /** The submission's call failed without an answer: the row is looked up at the provider after `ms`. */
  lookUpAfter(key: LedgerKey, seq: number, ms: number): Promise<void>;
  /** Which of these provider batch ids a row of the account holds (a batch found at the provider that is not this row's). */
  knownBatchIds(accountId: string, batchIds: string[]): Promise<Set<string>>;
  /** A new state (collected, cancelled, abandoned: its items are dropped, its count kept); `polled` notes a poll only. */
  setState(key: LedgerKey, seq: number, state: AiBatchState | "polled"): Promise<void>;
  /** Whether a person asked to cancel the run (a stop that is not this process handing its runs back). */
  cancelRequested(runId: string): Promise<boolean>;
}

export function pgBatchStore(db: Db): AiBatchStore {
  return {
    async open(key) {
      const rows = await execRows<{
        seq: number;
        provider: string;
        batch_id: string | null;
        state: AiBatchState;
        items: [number, string][] | string;
        created_ms: number | string;
        lookup_due: boolean;
      }>(
        db,
        sql`select seq, provider, batch_id, state, items, (extract(epoch from created_at) * 1000)::float8 as created_ms,
                   (submitting_until is null or submitting_until <= now()) as lookup_due
            from ai_batches
            where run_id = ${key.chainRunId} and node_id = ${key.nodeId} and state in ('submitting', 'running') order by seq`,
      );
      return rows.map((r) => ({
        seq: Number(r.seq),
        provider: r.provider,
        batchId: r.batch_id,
        state: r.state,
        items: typeof r.items === "string" ? (JSON.parse(r.items) as [number, string][]) : r.items,
        createdAtMs: Number(r.created_ms),
        lookupDue: r.lookup_due === true,
      }));
    },
    async begin(key, row) {
      const inserted = await execRows<{ seq: number }>(
        db,
        sql`insert into ai_batches (run_id, node_id, seq, account_id, provider, items, item_count, submitting_until)
            values (${key.chainRunId}, ${key.nodeId}, ${row.seq}, ${key.accountId}, ${row.provider}, ${JSON.stringify(row.items)}::jsonb, ${row.items.length},
                    now() + ${row.callMs} * interval '1 millisecond')
            on conflict do nothing returning seq`,
      );
      return inserted.length === 1;
    },
    async nextSeq(key) {
      const [row] = await execRows<{ next: number }>(
        db,
        sql`select coalesce(max(seq) + 1, 0)::int as next from ai_batches where run_id = ${key.chainRunId} and node_id = ${key.nodeId}`,
      );
      return Number(row?.next ?? 0);
    },
    async submitted(key, seq, batchId) {
      const updated = await execRows<{ seq: number }>(
        db,
        sql`update ai_batches set batch_id = ${batchId}, state = 'running', polled_at = now(), submitting_until = null
            where run_id = ${key.chainRunId} and node_id = ${key.nodeId} and seq = ${seq} and state = 'submitting' returning seq`,
      );
      return updated.length === 1;
    },
    async lookUpAfter(key, seq, ms) {
      await db.execute(sql`update ai_batches set submitting_until = now() + ${ms} * interval '1 millisecond'
        where run_id = ${key.chainRunId} and node_id = ${key.nodeId} and seq = ${seq} and state = 'submitting'`);
    },
    async knownBatchIds(accountId, batchIds) {
      if (batchIds.length === 0) return new Set();
      const rows = await execRows<{ batch_id: string }>(
        db,
        sql`select batch_id from ai_batches where account_id = ${accountId} and batch_id in (${sql.join(batchIds.map((id) => sql`${id}`), sql`, `)})`,
      );
      return new Set(rows.map((r) => r.batch_id));
    },
    async setState(key, seq, state) {
      if (state === "polled") {
        await db.execute(sql`update ai_batches set polled_at = now() where run_id = ${key.chainRunId} and node_id = ${key.nodeId} and seq = ${seq}`);
        return;
      }
      // The items are needed while the batch is open only: a finished row keeps its count, not its hashes.
      await db.execute(sql`update ai_batches set state = ${state}, ended_at = now(), items = '[]'::jsonb
        where run_id = ${key.chainRunId} and node_id = ${key.nodeId} and seq = ${seq}`);
    },
    async cancelRequested(runId) {
      const [row] = await execRows<{ cancel: boolean }>(db, sql`select cancel_requested_at is not null as cancel from runs where id = ${runId}`);
      return row?.cancel === true;
    },
  };
}
