import "server-only";
import type { Db } from "@/db/client";
import { UploadPrefetch } from "@/db/queries/upload-rows";
import { isDatabaseUnavailable } from "@/db/connection-errors";
import { contextRunner } from "@/lib/async-context";
import { log } from "@/lib/log";
import { executeRun, inlineStep, type EngineDeps, type Step } from "../core/execute-run";
import { pgEngineDeps } from "../pg-engine";
import { pgNodePorts } from "../pg-node-ports";
import { PgRunStore } from "../pg/pg-run-store";
import type { StoredRun } from "../core/run-store";
import { ensureExecutorLock } from "../pg/executor-lock";
import { pruneExpired } from "../pg/retention";
import { beginHandBack } from "../pg/run-control";
import { RunLostError } from "../core/run-stop";
import {
  reclaimOwnRun,
  HEARTBEAT_INTERVAL_MS,
  STALE_HEARTBEAT_SECONDS,
  staleRunningRuns,
  takeOverStaleRun,
  workflowsNeedingWake,
} from "../pg/queue";

/**
 * Backoffs before resuming a run after a lost or refusing database: short at first (a failover, a dropped connection),
 * then every 2 s for about a minute in all, so a run resumes within ~2 s of the database's return. Each resume
 * re-confirms ownership first; past the last one the sweep takes over.
 */
const RETRY_DELAYS_MS = [250, 500, 1_000, ...Array.from({ length: 28 }, () => 2_000)];

export { inlineStep };

/** Retention housekeeping runs at most this often per process (the sweep itself runs every few seconds). */
const PRUNE_INTERVAL_MS = 10 * 60 * 1000;

type Job = { workflowId: string; resumeRunId?: string; reclaim?: boolean };

export type EmbeddedExecutorOptions = {
  getDb: () => Promise<Db>;
  /** The engine's own state (db/client.ts's getRunStateDb); `getDb` when not given. */
  getRunStateDb?: () => Promise<Db>;
  concurrency: number;
  /** RUN_OUTPUT_RETENTION_DAYS (0 keeps outputs); the expired-row cleanup runs either way. */
  retentionDays?: number;
  sweepIntervalMs?: number;
  staleSeconds?: number;
  step?: Step;
  /**
   * Housekeeping of other domains that rides on the sweep (schedules' due slots, tus expiry): handed in by the process
   * that starts the executor (lib/services/background), so the engine imports no service. A task's failure is logged.
   */
  sweepTasks?: { name: string; run: (db: Db, poke: (workflowId: string) => void) => Promise<unknown> }[];
};

/**
 * The executor used when Inngest is not configured: a bounded pool working through workflows' queues. A workflow is
 * handled by at most one worker of this process at a time (Postgres still decides across processes); each worker
 * claims and executes runs of its workflow until the queue is empty. A periodic sweep repairs lost wake-ups and
 * resumes runs whose executor died (stale heartbeat).
 */
export class EmbeddedExecutor {
  private readonly waiting: Job[] = [];
  private readonly active = new Set<string>();
  private readonly pokedWhileActive = new Set<string>();
  /** Retries after a lost database, by run id (or `workflow:<id>` when the claim itself failed). */
  private readonly retries = new Map<string, number>();
  private running = 0;
  private timer: NodeJS.Timeout | undefined;
  private idleWaiters: (() => void)[] = [];
  private stopped = false;
  private lastPruneAt = 0;
  /** The timer's sweep in flight: stop() and handBack() wait for it, so no sweep queries a database closed after them. */
  private sweeping: Promise<void> | undefined;
  /**
   * Jobs run in the async context the executor was made in (the server's start), not in that of the request whose
   * enqueue poked it (see contextRunner). Paired bench/tiny-runs on PostgreSQL: app CPU 5.48/5.75 → 4.87/5.12 ms/run.
   */
  private readonly detached = contextRunner();

  constructor(private readonly options: EmbeddedExecutorOptions) {}

  /**
   * `resumeAllRunning`: every RUNNING run belongs to a dead process (the embedded database admits one process),
   * so resume them now instead of waiting for their heartbeat to go stale.
   */
  start(options: { resumeAllRunning?: boolean } = {}): void {
    const interval = this.options.sweepIntervalMs ?? 5_000;
    this.timer = setInterval(() => this.sweepInBackground(), interval);
    this.timer.unref();
    this.sweepInBackground(options.resumeAllRunning ? 0 : undefined);
  }

  /** One sweep at a time: a tick that comes while the previous sweep still runs is skipped. */
  private sweepInBackground(staleSeconds?: number): void {
    if (this.sweeping || this.stopped) return;
    this.sweeping = this.sweep(staleSeconds)
      .catch((error) => log.error("run sweep failed", { error }))
      .finally(() => (this.sweeping = undefined));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.sweeping;
    await this.idle();
  }

  /**
   * SIGTERM/SIGINT: every run stops at its next step boundary and is released (RUNNING, no executor, no heartbeat),
   * so the next process, or another instance, resumes it at once. Waits at most `timeoutMs` (a step may be a long AI
   * call): past that the process exits anyway, and its vanished lock session frees the run just the same.
   */
  async handBack(timeoutMs: number): Promise<boolean> {
    beginHandBack();
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const done = await Promise.race([Promise.all([this.sweeping, this.idle()]).then(() => true), timedOut]);
    clearTimeout(timer);
    return done;
  }

  /** A wake-up for the workflow: its queue is worked through soon. */
  poke(workflowId: string, resumeRunId?: string, reclaim = false): void {
    if (this.stopped) return;
    if (this.active.has(workflowId) && !resumeRunId) {
      this.pokedWhileActive.add(workflowId);
      return;
    }
    if (!resumeRunId && this.waiting.some((j) => j.workflowId === workflowId)) return;
    this.waiting.push({ workflowId, resumeRunId, reclaim });
    this.pump();
  }

  /** Wakes workflows whose wake-up was lost; resumes runs whose executor stopped beating. */
  async sweep(staleSeconds = this.options.staleSeconds ?? STALE_HEARTBEAT_SECONDS): Promise<void> {
    const db = await this.options.getDb();
    await ensureExecutorLock();
    for (const run of await staleRunningRuns(db, staleSeconds)) {
      if (await takeOverStaleRun(db, run.runId, staleSeconds)) {
        log.warn("resuming a run whose executor stopped", { runId: run.runId });
        this.poke(run.workflowId, run.runId);
      }
    }
    for (const workflowId of await workflowsNeedingWake(db)) this.poke(workflowId);
    for (const task of this.options.sweepTasks ?? []) {
      await task.run(db, (workflowId) => this.poke(workflowId)).catch((error) => log.error(`${task.name} failed`, { error }));
    }
    // Retention: expired throttle/idempotency/OAuth rows, and run outputs past RUN_OUTPUT_RETENTION_DAYS.
    if (Date.now() - this.lastPruneAt >= PRUNE_INTERVAL_MS) {
      this.lastPruneAt = Date.now();
      const report = await pruneExpired(db, { retentionDays: this.options.retentionDays ?? 0 }).catch((error) => {
        log.error("retention sweep failed", { error });
        return undefined;
      });
      if (report && report.runsExpired > 0) log.info("run outputs past their retention dropped", report);
    }
  }

  /** Slots working on a workflow's queue now, and the slots there are (the executor-slots metrics). */
  slotUsage(): { busy: number; slots: number } {
    return { busy: this.running, slots: this.options.concurrency };
  }

  /** Resolves when no job is running or waiting (tests and benchmarks). */
  idle(): Promise<void> {
    if (this.running === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (this.running < this.options.concurrency) {
      const index = this.waiting.findIndex((j) => !this.active.has(j.workflowId));
      if (index < 0) break;
      const [job] = this.waiting.splice(index, 1);
      this.running++;
      this.active.add(job.workflowId);
      void this.detached(() => this.work(job)).finally(() => {
        this.running--;
        this.active.delete(job.workflowId);
        if (this.pokedWhileActive.delete(job.workflowId)) this.poke(job.workflowId);
        this.pump();
        if (this.running === 0 && this.waiting.length === 0) this.idleWaiters.splice(0).forEach((r) => r());
      });
    }
  }

  private async work(job: Job): Promise<void> {
    let current: string | undefined = job.resumeRunId;
    let store: PgRunStore | undefined;
    try {
      const db = await this.options.getDb();
      // Every step runs here, in order: the store may hold writes back and claim the workflow's next run in the
      // statement that finishes one (PgRunStoreOptions.inline). A finished run's wake-up for this job's workflow is
      // this loop's next claim; other pokes (enqueues) still count.
      const runStateDb = await (this.options.getRunStateDb ?? this.options.getDb)();
      // Each claim reads the uploads its run's DATA_SOURCE nodes name, for this job's ports: no statement of their own.
      const uploadPrefetch = new UploadPrefetch();
      store = new PgRunStore(runStateDb, { inline: true, uploadPrefetch });
      const deps: EngineDeps = {
        ...pgEngineDeps(db, async (workflowId) => {
          if (workflowId !== job.workflowId) this.poke(workflowId);
        }),
        store,
        ports: pgNodePorts(db, { inline: true, volatileDb: runStateDb, uploadPrefetch }),
      };
      if (job.resumeRunId) {
        // A retry after a lost database resumes the run only if it is still this process's (see reclaimOwnRun).
        if (!job.reclaim || (await reclaimOwnRun(db, job.resumeRunId))) await this.execute(deps, job.resumeRunId);
        else log.warn("not resuming a run: it finished or another process took it over", { runId: job.resumeRunId });
      }
      this.retries.delete(job.resumeRunId ?? "");
      while (!this.stopped) {
        current = undefined;
        const claimed = await deps.store.claimNext(job.workflowId);
        if (!claimed) break;
        current = claimed.runId;
        await this.execute(deps, claimed.runId, claimed);
      }
      this.retries.delete(`workflow:${job.workflowId}`);
      await this.releaseClaimedAhead(store, job.workflowId);
    } catch (error) {
      if (current) store?.abandon(current);
      await this.releaseClaimedAhead(store, job.workflowId);
      if (error instanceof RunLostError) {
        log.warn("stopped executing a run another process took over", { runId: error.runId });
        return;
      }
      if (isDatabaseUnavailable(error) && this.retryLater(job.workflowId, current)) return;
      // The run stays RUNNING; its heartbeat goes stale and the sweep resumes it.
      log.error("run execution stopped unexpectedly", { workflowId: job.workflowId, error });
    }
  }

  /**
   * The database went away under a run (restart, failover, dropped connection). The run is still ours (RUNNING, our
   * heartbeat), so it is resumed here after a short backoff instead of waiting for the sweep's stale-heartbeat window;
   * its finished nodes are not run again, and the send ledger keeps emails exactly-once. Each resume first re-confirms
   * ownership with a compare-and-set on the heartbeat this process last wrote, so a run another process took over
   * meanwhile (a long outage) is never executed twice; after the last backoff the sweep takes over.
   */
  private retryLater(workflowId: string, runId: string | undefined): boolean {
    if (this.stopped) return false;
    const key = runId ?? `workflow:${workflowId}`;
    const attempt = this.retries.get(key) ?? 0;
    const delay = RETRY_DELAYS_MS[attempt];
    if (delay === undefined) {
      this.retries.delete(key);
      return false;
    }
    this.retries.set(key, attempt + 1);
    if (this.retries.size > 10_000) this.retries.clear();
    log.warn("database unavailable during a run: retrying shortly", { workflowId, runId, attempt: attempt + 1, delayMs: delay });
    const timer = setTimeout(() => this.poke(workflowId, runId, runId !== undefined), delay);
    timer.unref();
    return true;
  }

  /**
   * A run the last finished one claimed ahead that this job will not execute (the executor stops, or the job failed):
   * released (no executor, no heartbeat), so the sweep of this process or another resumes it at once.
   */
  private async releaseClaimedAhead(store: PgRunStore | undefined, workflowId: string): Promise<void> {
    const runId = store?.takeClaimedAhead(workflowId);
    if (!runId) return;
    await store!.release(runId).catch((error) => log.warn("could not release a run claimed ahead (its heartbeat will go stale)", { runId, error }));
  }

  private async execute(deps: EngineDeps, runId: string, claimed?: StoredRun): Promise<void> {
    const beat = setInterval(() => void deps.store.heartbeat(runId).catch(() => {}), HEARTBEAT_INTERVAL_MS);
    beat.unref();
    try {
      await executeRun(this.options.step ?? inlineStep, deps, runId, claimed);
    } finally {
      clearInterval(beat);
    }
  }
}

const globalForExecutor = globalThis as unknown as { __flowmailExecutor?: EmbeddedExecutor };

export function getEmbeddedExecutor(): EmbeddedExecutor | undefined {
  return globalForExecutor.__flowmailExecutor;
}

/** Starts the process-wide executor once (kept on globalThis so dev-server reloads never start two). */
export function startEmbeddedExecutor(options: EmbeddedExecutorOptions, start: { resumeAllRunning?: boolean } = {}): EmbeddedExecutor {
  if (!globalForExecutor.__flowmailExecutor) {
    globalForExecutor.__flowmailExecutor = new EmbeddedExecutor(options);
    globalForExecutor.__flowmailExecutor.start(start);
  }
  return globalForExecutor.__flowmailExecutor;
}

export async function stopEmbeddedExecutor(): Promise<void> {
  const executor = globalForExecutor.__flowmailExecutor;
  globalForExecutor.__flowmailExecutor = undefined;
  await executor?.stop();
}
