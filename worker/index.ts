/*
 * `npm run worker`: a Flowmail process that executes runs, and does the sweep (lost wake-ups, runs whose executor
 * died, schedules, tus expiry, retention) and the webhook deliveries, and serves no page and no API. Run any number
 * of them beside web processes started with EXECUTOR=off on one PostgreSQL: the database decides every claim, so FIFO
 * per workflow, exactly-once sends, the shared limits and the takeover of a dead process's runs hold across them.
 */
import { ConfigError, getConfig } from "@/lib/config";
import { log, logFatal } from "@/lib/log";

export const WORKER_NEEDS_POSTGRES =
  "The worker needs PostgreSQL: set DATABASE_URL. The embedded database (PGlite) serves one process, so without DATABASE_URL run `npm start` alone: it executes its own runs.";
export const WORKER_NOT_WITH_INNGEST =
  "The worker is not needed with Inngest: Inngest executes the runs (INNGEST_EVENT_KEY / INNGEST_SIGNING_KEY are set). Unset them to use worker processes.";

async function main(): Promise<void> {
  let config;
  try {
    config = getConfig();
    if (!config.databaseUrl) throw new ConfigError(WORKER_NEEDS_POSTGRES);
    if (config.inngest.enabled) throw new ConfigError(WORKER_NOT_WITH_INNGEST);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    logFatal(`Flowmail worker cannot start: ${error.message}`);
    process.exit(1);
  }
  // A worker always executes runs, whatever EXECUTOR says (that variable is for web processes).
  process.env.EXECUTOR = "on";
  const { resetConfig } = await import("@/lib/config");
  resetConfig();
  const { startTracing } = await import("@/lib/observability/tracing");
  startTracing(config.otelExporterEndpoint, "flowmail-worker");
  const { installShutdownHandBack, startBackgroundWork } = await import("@/lib/services/background/start-background-work");
  await startBackgroundWork();
  installShutdownHandBack();
  const { getEmbeddedExecutor } = await import("@/lib/engine/drivers/embedded-executor");
  const { listenForWakes } = await import("@/lib/engine/drivers/wake-channel");
  await listenForWakes(config.databaseUrl!, (workflowId) => getEmbeddedExecutor()?.poke(workflowId));
  (await import("@/lib/webhooks/delivery-loop")).startWebhookDeliveryLoop();
  const { startWorkerMetricsServer } = await import("./metrics-server");
  const port = await startWorkerMetricsServer(config.workerPort);
  const { executorKey } = await import("@/lib/engine/pg/executor-lock");
  log.info("worker started", { concurrency: config.executorConcurrency, pid: process.pid, executorKey: executorKey(), ...(port ? { metricsPort: port } : {}) });
}

main().catch((error: unknown) => {
  log.error("worker failed to start", { error });
  process.exit(2);
});
