// The shell of the fault tests' executor processes (worker.ts, send-worker.ts): an embedded executor on the test's
// database (DATABASE_URL or DATA_DIR), the process's own work with it, then a clean stop; exit 0, or 2 on an error.
import { closeDb, getDb } from "@/db/client";
import { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { SWEEP_TASKS } from "@/lib/services/background/start-background-work";

export function runExecutorProcess(sweepIntervalMs: number, work: (executor: EmbeddedExecutor) => Promise<void>): void {
  async function main(): Promise<void> {
    // 2 unless a test asks for more (FAULT_EXECUTOR_CONCURRENCY: many small runs at once, whose emails share calls).
    const concurrency = Number(process.env.FAULT_EXECUTOR_CONCURRENCY ?? 2);
    const executor = new EmbeddedExecutor({ getDb, concurrency, sweepIntervalMs, sweepTasks: SWEEP_TASKS });
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
