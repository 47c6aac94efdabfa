import "server-only";
import { getDb } from "@/db/client";
import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";
import { startEmbeddedExecutor } from "./embedded-executor";

/**
 * Background work of one server process. With Inngest configured, runs are executed by the `execute-run` function
 * (served at /api/inngest) and nothing runs here; otherwise the embedded executor starts, and its first sweep
 * resumes the runs a previous process left RUNNING.
 */
export async function startBackgroundWork(): Promise<void> {
  const config = getConfig();
  if (!config.inngest.enabled) {
    // Open the database first so a locked embedded database fails loudly at start, not at the first run.
    await getDb();
    startEmbeddedExecutor({ getDb, concurrency: config.executorConcurrency }, { resumeAllRunning: !config.databaseUrl });
    log.info("embedded run executor started", { concurrency: config.executorConcurrency });
  }
}
