import "server-only";
import { sql } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import { isSmallOutput } from "@/db/queries/node-outputs";
import type { UploadPrefetch } from "@/db/queries/upload-rows";
import { heldCtes, isEmptyBatch, type HeldBatch, type HeldLine, type HeldSuccess } from "./buffered-writes";
import { finalizeRunRows, finishFromRows, type FinalRow } from "./finalize-run";
import { log } from "@/lib/log";
import { forgetRunOutputs, loadOutputs, markNodeFailed, markNodesSkipped, markNodeSucceeded, startNodeRow, startRunRows } from "./node-store";
import { claimNextRunWithInfo, heartbeat, type ClaimedRunInfo } from "./queue";
import { releaseRun, stopReason } from "./run-control";
import { runMemory } from "./run-memory";
import { appendRunLog } from "./run-log";
import type { NodeStatus } from "@/db/schema";
import type { RunStore, StoredRun } from "../core/run-store";
import { RUN_COLUMNS, runFromRow, type RunRow } from "./run-row";

/**
 * How long a started node may run before its RUNNING status is written (the canvas shows it from then on), and the
 * longest an inline store holds a node success or a log line back (see PgRunStoreOptions.inline).
 */
export const DEFERRED_RUNNING_MS = 250;

export type PgRunStoreOptions = {
  /**
   * Every step of a run executes in this process, one after the other (the embedded executor; not Inngest, whose steps
   * may run in other invocations where this process's memory is gone). Then the store holds back, for at most
   * DEFERRED_RUNNING_MS or until a statement of the run goes anyway (finalize, above all): the RUNNING write of every
   * node the claim has just written PENDING (not only of nodes without batches), node successes with small outputs
   * (markNodeSucceeded's columns and log lines; an output with a top-level array over SPILL_MIN_ITEMS is written at
   * once by markNodeSucceeded, after what is held), and log lines. A quick run's node rows, log lines and status go out
   * in finalize's two statements; a run still running after DEFERRED_RUNNING_MS shows its nodes as they are. A crash
   * before the write leaves those nodes PENDING: they execute again when the run resumes (exactly-once sending is the
   * send ledger's, which is written at once, on the durable pool). And the statement that finishes a run claims the
   * workflow's next one (claim-ahead: claimNext then answers without a statement, or null when the workflow had no
   * PENDING run left).
   */
  inline?: boolean;
  /**
   * The embedded executor's job: every claim (claimNext, and finalize's claim-ahead) also reads the uploads the claimed
   * run's DATA_SOURCE nodes name, and hands them to the job's node ports through this (db/queries/upload-rows.ts).
   */
  uploadPrefetch?: UploadPrefetch;
};

/** How a node of a run this store knows whole ended (see PgRunStore.known). */
type KnownNode = { status: NodeStatus; error: string | null; counts?: Partial<Record<(typeof COUNTED)[number], unknown>> };

/** The output fields finalize counts (DATA_SOURCE rowCount, FILTER filteredOut, OUTPUT's ledger counts). */
const COUNTED = ["rowCount", "filteredOut", "emailsSent", "suppressed", "duplicates", "emailsPlanned", "failed", "unknown"] as const;

/** finalize() writes from what it knows only this soon after the claim (see PgRunStore.knownRows). */
const KNOWN_FOR_MS = 30_000;

/** What the store holds back for one run (see PgRunStoreOptions.inline). */
type RunState = {
  successes: HeldSuccess[];
  lines: HeldLine[];
  /** Nodes started without a statement and not yet written RUNNING, with their start. */
  running: Map<string, Date>;
  /** Outputs of the nodes this store finished with small outputs (node-store's cache knows only what it wrote). */
  outputs: Map<string, Record<string, unknown>>;
  timer?: NodeJS.Timeout;
  /** The statement writing this run's held batch, in flight: the next one waits for it (log lines keep their order). */
  writing?: Promise<unknown>;
};

/**
 * The product's RunStore: node rows, outputs, logs and the run's status in PostgreSQL (or PGlite). Claims, heartbeats
 * and takeovers follow queue.ts (one atomic UPDATE each, ownership by executor key and heartbeat).
 */
export class PgRunStore implements RunStore {
  /**
   * Nodes whose PENDING row the claim has just written (`runId:nodeId`): starting one needs no read (nothing else writes
   * a claimed run's node rows), so its RUNNING write is deferred (a node without batches, or any node when inline) —
   * made only if it is still running after DEFERRED_RUNNING_MS, else folded into its finishing write. Saves a round
   * trip per node.
   */
  private readonly fresh = new Set<string>();
  private readonly runs = new Map<string, RunState>();
  /** Claim-ahead results by workflow (inline): the next run, claimed, or "empty". */
  private readonly ahead = new Map<string, ClaimedRunInfo | "empty">();
  /**
   * Inline: runs this store claimed with every node row fresh (nothing reused, nothing from an earlier execution), and
   * how each node ended here. finalize() then knows every row and the counts without reading them (see knownRows).
   */
  private readonly known = new Map<string, { claimedAt: number; nodes: Map<string, KnownNode> }>();
  private readonly inline: boolean;
  private readonly uploadPrefetch: UploadPrefetch | undefined;
  /** What the process remembers of its runs (heartbeats, stop checks, progress writes), shared by every store. */
  private readonly memory = runMemory();

  constructor(
    readonly db: Db,
    options: PgRunStoreOptions = {},
  ) {
    this.inline = options.inline === true;
    this.uploadPrefetch = options.uploadPrefetch;
  }

  async claimNext(workflowId: string) {
    const ahead = this.ahead.get(workflowId);
    this.ahead.delete(workflowId);
    if (ahead === "empty") return null;
    const found = ahead ?? (await claimNextRunWithInfo(this.db, workflowId, { uploads: this.uploadPrefetch !== undefined }));
    if (!found) return null;
    // The uploads go to the node ports, not into the run (its snapshot is kept while it executes).
    const { uploads, ...claimed } = found;
    this.uploadPrefetch?.set(claimed.accountId, uploads);
    // The claim wrote the heartbeat and read the cancel flag: the first beat and stop check need no statement.
    this.memory.noteBeat(claimed.runId);
    this.memory.noteStopCheck(claimed.runId, claimed.cancelRequested);
    for (const nodeId of claimed.freshNodes) this.fresh.add(`${claimed.runId}:${nodeId}`);
    const fresh = new Set(claimed.freshNodes);
    if (this.inline && claimed.graph.nodes.every((n) => fresh.has(n.id))) this.known.set(claimed.runId, { claimedAt: Date.now(), nodes: new Map() });
    return { ...claimed, status: "RUNNING", started: true, claimed: true as const };
  }

  /** A run claimed ahead for the workflow and not executed (the executor stops): the caller releases it. */
  takeClaimedAhead(workflowId: string): string | undefined {
    const ahead = this.ahead.get(workflowId);
    this.ahead.delete(workflowId);
    return ahead && ahead !== "empty" ? ahead.runId : undefined;
  }

  async loadRun(runId: string): Promise<StoredRun | undefined> {
    const [row] = await execRows<RunRow & { status: string }>(
      this.db,
      sql`select ${sql.raw(RUN_COLUMNS)}, status from runs where id = ${runId}`,
    );
    return row ? { ...runFromRow(row), status: row.status } : undefined;
  }

  startRun(run: StoredRun) {
    return startRunRows(this.db, run.runId);
  }

  async startNode(runId: string, nodeId: string, options: { deferrable?: boolean } = {}) {
    // A node with batches (OUTPUT) is written RUNNING at once unless inline: its batch steps may run in other
    // invocations (Inngest), where this process's timer and start time are gone.
    if (this.fresh.delete(`${runId}:${nodeId}`) && (options.deferrable || this.inline)) {
      const state = this.state(runId);
      state.running.set(nodeId, new Date());
      this.arm(runId, state);
      return undefined;
    }
    return this.afterHeld(runId, () => startNodeRow(this.db, runId, nodeId));
  }

  async nodeSucceeded(runId: string, nodeId: string, success: Parameters<RunStore["nodeSucceeded"]>[2]) {
    const startedAt = this.takeStart(runId, nodeId);
    this.known.get(runId)?.nodes.set(nodeId, { status: "SUCCESS", error: null, counts: Object.fromEntries(COUNTED.map((f) => [f, success.output[f]])) });
    if (this.inline && isSmallOutput(success.output)) {
      const state = this.state(runId);
      state.successes.push({
        nodeId,
        output: success.output,
        itemsIn: success.itemsIn ?? null,
        itemsOut: success.itemsOut ?? null,
        startedAt: startedAt ?? null,
        completedAt: new Date(),
      });
      for (const message of success.logMessages) state.lines.push({ nodeId, level: "info", message, withSuccessOf: nodeId });
      state.outputs.set(nodeId, success.output);
      this.arm(runId, state);
      return;
    }
    // Large arrays are stored in pieces by markNodeSucceeded (node-store.ts): written now, after what is held.
    await this.afterHeld(runId, () => markNodeSucceeded(this.db, runId, nodeId, success, startedAt));
  }

  nodeFailed(runId: string, nodeId: string, error: string) {
    const startedAt = this.takeStart(runId, nodeId);
    this.known.get(runId)?.nodes.set(nodeId, { status: "FAILED", error });
    return this.afterHeld(runId, () => markNodeFailed(this.db, runId, nodeId, error, startedAt));
  }

  /** A deferred start's time (its RUNNING write no longer needed: the finishing write sets started_at). */
  private takeStart(runId: string, nodeId: string): Date | undefined {
    const state = this.runs.get(runId);
    const at = state?.running.get(nodeId);
    state?.running.delete(nodeId);
    return at;
  }

  nodesSkipped(runId: string, nodeIds: string[]) {
    const known = this.known.get(runId)?.nodes;
    for (const nodeId of nodeIds) if (known && !known.has(nodeId)) known.set(nodeId, { status: "SKIPPED", error: null });
    return markNodesSkipped(this.db, runId, nodeIds);
  }

  async outputs(runId: string, nodeIds: string[]) {
    const known = this.runs.get(runId)?.outputs;
    if (!known) return loadOutputs(this.db, runId, nodeIds);
    const out = new Map<string, Record<string, unknown>>();
    const rest: string[] = [];
    for (const id of nodeIds) {
      const output = known.get(id);
      if (output) out.set(id, output);
      else rest.push(id);
    }
    if (rest.length > 0) for (const [id, output] of await loadOutputs(this.db, runId, rest)) out.set(id, output);
    return out;
  }

  async log(runId: string, level: Parameters<RunStore["log"]>[1], message: string, nodeId?: string) {
    if (!this.inline) return appendRunLog(this.db, runId, level, message, nodeId);
    const state = this.state(runId);
    state.lines.push({ nodeId: nodeId ?? null, level, message });
    this.arm(runId, state);
  }

  forget(runId: string): void {
    forgetRunOutputs(runId);
    this.memory.forget(runId);
  }

  stopReason(runId: string, options?: { fresh?: boolean }) {
    return stopReason(this.db, runId, options);
  }

  heartbeat(runId: string, options: { skipWithinMs?: number } = {}) {
    const now = Date.now();
    if (options.skipWithinMs !== undefined && now - (this.memory.beatAt.get(runId) ?? 0) < options.skipWithinMs) return Promise.resolve(true);
    // Noted before the statement: the other nodes of a wave, asking meanwhile, do not beat again.
    this.memory.noteBeat(runId, now);
    return heartbeat(this.db, runId);
  }

  async release(runId: string) {
    try {
      await this.afterHeld(runId, () => releaseRun(this.db, runId));
    } finally {
      this.abandon(runId);
    }
  }

  /**
   * This store stops executing the run (released, finished, given up after a lost database, or taken over): nodes it
   * never started stay as their rows say, and nothing it still holds is written (a resume executes those nodes again).
   */
  abandon(runId: string): void {
    this.known.delete(runId);
    for (const key of this.fresh) if (key.startsWith(`${runId}:`)) this.fresh.delete(key);
    const state = this.runs.get(runId);
    if (state?.timer) clearTimeout(state.timer);
    this.runs.delete(runId);
  }

  async finalize(run: Parameters<RunStore["finalize"]>[0], order: string[], options: { cancelled: boolean }) {
    try {
      const rows = options.cancelled ? undefined : this.knownRows(run);
      const claim = { claimAhead: this.inline, claimAheadUploads: this.uploadPrefetch !== undefined };
      const finalized = await this.withHeld(run.runId, (held) =>
        rows
          ? finishFromRows(this.db, run, order, rows, { held, ...claim })
          : finalizeRunRows(this.db, run, order, { cancelled: options.cancelled, held, ...claim }),
      );
      if (finalized.ahead) this.ahead.set(run.workflowId, finalized.ahead);
      const { ahead: _ahead, ...rest } = finalized;
      return rest;
    } finally {
      this.abandon(run.runId);
    }
  }

  /**
   * The rows finalize would read, when this store knows them all (one statement instead of two): a run it claimed with
   * every node fresh, within KNOWN_FOR_MS of the claim (far inside the 60 s after which another process may take a run
   * over), each node ended here or never started (SKIPPED then), and every OUTPUT node that ran succeeded — its output's
   * counts are its ledger's, read by its last step; a FAILED one falls back to the read, as does a cancel. The run is its
   * own ledger (a retry or a send reuses nodes, so it is never fresh).
   */
  private knownRows(run: Parameters<RunStore["finalize"]>[0]): FinalRow[] | undefined {
    const known = this.known.get(run.runId);
    if (!known || Date.now() - known.claimedAt > KNOWN_FOR_MS || (run.ledgerRunId ?? run.runId) !== run.runId) return undefined;
    // The run's ledger counts, the same on every row (as finalizeRunRows reads them beside each node).
    const ledger = { emails_sent: 0, suppressed: 0, duplicates: 0, planned: 0, failed: 0, unknown: 0 };
    const nodes: Omit<FinalRow, keyof typeof ledger>[] = [];
    const count = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : 0);
    for (const node of run.graph.nodes) {
      const ended = known.nodes.get(node.id);
      const status: NodeStatus = ended?.status ?? "PENDING";
      const output = ended?.counts;
      if (node.type === "OUTPUT" && status === "FAILED") return undefined;
      if (node.type === "OUTPUT" && status === "SUCCESS") {
        ledger.emails_sent += count(output?.emailsSent);
        ledger.suppressed += count(output?.suppressed);
        ledger.duplicates += count(output?.duplicates);
        ledger.planned += count(output?.emailsPlanned);
        ledger.failed += count(output?.failed);
        ledger.unknown += count(output?.unknown);
      }
      nodes.push({
        node_id: node.id,
        status,
        error: ended?.error ?? null,
        row_count: node.type === "DATA_SOURCE" && status === "SUCCESS" ? count(output?.rowCount) : null,
        filtered_out: node.type === "FILTER" && status === "SUCCESS" ? count(output?.filteredOut) : null,
      });
    }
    return nodes.map((n) => ({ ...n, ...ledger }));
  }

  private state(runId: string): RunState {
    let state = this.runs.get(runId);
    if (!state) {
      state = { successes: [], lines: [], running: new Map(), outputs: new Map() };
      this.runs.set(runId, state);
    }
    return state;
  }

  /** Something is held for the run: it is written after DEFERRED_RUNNING_MS unless a statement of the run takes it first. */
  private arm(runId: string, state: RunState, delay = DEFERRED_RUNNING_MS): void {
    if (state.timer) return;
    state.timer = setTimeout(() => {
      state.timer = undefined;
      if (this.runs.get(runId) !== state) return;
      this.afterHeld(runId, async () => {}, { running: true }).catch((error) => {
        log.warn("could not write a run's node statuses and log lines (retrying)", { runId, error });
        if (this.runs.get(runId) === state) this.arm(runId, state, 1_000);
      });
    }, delay);
    state.timer.unref();
  }

  /**
   * Runs `statement` with what the run holds (taken out of the state, after any write in flight): on failure it is
   * held again, in front of anything held meanwhile. `running`: the deferred RUNNING writes too (the timer); other
   * statements take only what must keep its order (successes and log lines).
   */
  private async withHeld<T>(runId: string, statement: (held: HeldBatch | undefined) => Promise<T>, options: { running?: boolean } = {}): Promise<T> {
    const state = this.runs.get(runId);
    if (!state) return statement(undefined);
    while (state.writing) await state.writing.catch(() => {});
    const held: HeldBatch = {
      successes: state.successes.splice(0),
      lines: state.lines.splice(0),
      running: options.running ? [...state.running].map(([nodeId, at]) => ({ nodeId, at })) : [],
    };
    if (options.running) state.running.clear();
    if (state.timer && state.running.size === 0) {
      clearTimeout(state.timer);
      state.timer = undefined;
    }
    const writing = statement(isEmptyBatch(held) ? undefined : held);
    state.writing = writing;
    try {
      return await writing;
    } catch (error) {
      state.successes.unshift(...held.successes);
      state.lines.unshift(...held.lines);
      for (const r of held.running) if (!state.running.has(r.nodeId)) state.running.set(r.nodeId, r.at);
      throw error;
    } finally {
      if (state.writing === writing) state.writing = undefined;
    }
  }

  /** Writes what the run holds (one statement, none when nothing is held), then runs `then`. */
  private async afterHeld<T>(runId: string, then: () => Promise<T>, options: { running?: boolean } = {}): Promise<T> {
    await this.withHeld(
      runId,
      async (held) => {
        if (held) await this.db.execute(sql`with ${heldCtes(runId, held)} select 1`);
      },
      options,
    );
    return then();
  }
}
