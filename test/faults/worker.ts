// A separate Flowmail executor process for the kill -9 fault test: the embedded executor against DATABASE_URL
// (PostgreSQL) or DATA_DIR (PGlite), started the way a restarted server starts it. It takes over every RUNNING run
// at once (staleness 0 s: the test guarantees the previous executor is dead), works until idle, then exits 0.
import { closeDb, getDb } from "@/db/client";
import { EmbeddedExecutor } from "@/lib/engine/embedded-executor";

async function main(): Promise<void> {
  const executor = new EmbeddedExecutor({ getDb, concurrency: 2, sweepIntervalMs: 3_600_000 });
  await getDb();
  await executor.sweep(0);
  await executor.idle();
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
