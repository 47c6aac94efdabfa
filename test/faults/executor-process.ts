// The shell of the fault tests' executor processes (worker.ts, send-worker.ts): an embedded executor on the test's
// database (DATABASE_URL or DATA_DIR), the process's own work with it, then a clean stop; exit 0, or 2 on an error.
import { closeDb, getDb } from "@/db/client";
import { EmbeddedExecutor } from "@/lib/engine/embedded-executor";
import { SWEEP_TASKS } from "@/lib/services/background/start-background-work";

export function runExecutorProcess(sweepIntervalMs: number, work: (executor: EmbeddedExecutor) => Promise<void>): void {
  async function main(): Promise<void> {
    const executor = new EmbeddedExecutor({ getDb, concurrency: 2, sweepIntervalMs, sweepTasks: SWEEP_TASKS });
    await getDb();
    await work(executor);
    await executor.stop();
    await closeDb();
  }
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(2);
    },
  );
}
