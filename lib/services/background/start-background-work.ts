import "server-only";
import { getBackgroundDb, getDb, getRunStateDb } from "@/db/client";
import { ConfigError, getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import { nowDate } from "@/lib/clock";
import { acquireExecutorLock, enqueueDueSlots, getEmbeddedExecutor, releaseExecutorLock, startEmbeddedExecutor, type EmbeddedExecutorOptions } from "@/lib/engine";
import { flushTracing } from "@/lib/observability/tracing";
import { expireTusUploads } from "@/lib/services/uploads/expire-tus-uploads";

export const EXECUTOR_OFF_NEEDS_POSTGRES =
  "EXECUTOR=off needs PostgreSQL (DATABASE_URL): the embedded database serves one process, which must execute its own runs.";

/** Housekeeping that rides on the embedded executor's sweep (every 5 s). */
export const SWEEP_TASKS: NonNullable<EmbeddedExecutorOptions["sweepTasks"]> = [
  // Schedules: due slots become runs here; a slot is claimed in the database, so instances never double up.
  { name: "schedule sweep", run: (db, poke) => enqueueDueSlots(db, nowDate(), poke) },
  // Resumable uploads: unfinished tus uploads expire after 24 h.
  { name: "tus upload expiry", run: () => expireTusUploads() },
];

/**
 * Background work of one server process. With Inngest configured, runs are executed by the `execute-run` function
 * (served at /api/inngest) and nothing runs here; otherwise the embedded executor starts, and its first sweep
 * resumes the runs a previous process left RUNNING (on PostgreSQL: those whose executor's lock session is gone,
 * including this host's previous process; on PGlite: all of them, as one process owns the database).
 */
export async function startBackgroundWork(): Promise<void> {
  const config = getConfig();
  if (!config.inngest.enabled && !config.executorEnabled) {
    // EXECUTOR=off: this process enqueues; worker processes (`npm run worker`) execute, woken through the database.
    if (!config.databaseUrl) throw new ConfigError(EXECUTOR_OFF_NEEDS_POSTGRES);
    log.info("run executor off in this process (EXECUTOR=off): worker processes execute the runs");
    return;
  }
  if (!config.inngest.enabled) {
    // Open the database first so a locked embedded database fails loudly at start, not at the first run.
    await getDb();
    // The lock before the executor: every run this process claims carries a key whose session is alive.
    if (config.databaseUrl) await acquireExecutorLock(config.databaseUrl);
    // The executor works on the background lane (PGlite in its worker: requests' statements go first; else the same db).
    startEmbeddedExecutor({ getDb: getBackgroundDb, getRunStateDb, concurrency: config.executorConcurrency, retentionDays: config.runOutputRetentionDays, sweepTasks: SWEEP_TASKS }, { resumeAllRunning: !config.databaseUrl });
    log.info("embedded run executor started", { concurrency: config.executorConcurrency });
  }
}

/** How long SIGTERM waits for running runs to reach a step boundary (Docker's default grace period is 10 s). */
export const HAND_BACK_TIMEOUT_MS = 8_000;

/** SIGTERM/SIGINT: hand running runs back at their next step boundary, then end the lock session. */
export async function handBackRuns(timeoutMs = HAND_BACK_TIMEOUT_MS): Promise<void> {
  const executor = getEmbeddedExecutor();
  if (!executor) return;
  const started = Date.now();
  const clean = await executor.handBack(timeoutMs);
  await releaseExecutorLock();
  log.info("runs handed back before exit", { ms: Date.now() - started, atStepBoundary: clean });
  // The spans of the runs this process just handed back or finished leave before it exits.
  await flushTracing();
}

let installed = false;

/**
 * Installs the SIGTERM/SIGINT hand-back. Next's own signal handler closes the HTTP server and then calls
 * process.exit; that exit is held until the hand-back is done (bounded by HAND_BACK_TIMEOUT_MS). In a process
 * without another handler (a plain Node worker), the hand-back exits itself.
 */
export function installShutdownHandBack(): void {
  if (installed) return;
  installed = true;
  let handing: Promise<void> | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (handing) return;
    handing = handBackRuns().catch((error) => log.error("hand-back failed", { error }));
    const exit = process.exit.bind(process);
    process.exit = ((code?: number) => {
      void handing!.finally(() => exit(code));
    }) as typeof process.exit;
    if (process.listenerCount(signal) === 1) void handing.finally(() => exit(signal === "SIGINT" ? 130 : 143));
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}
