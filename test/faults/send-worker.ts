// An app instance for the pacing fault test: the embedded executor against DATABASE_URL (PostgreSQL), sending through
// the Resend SDK to RESEND_BASE_URL. Its sweep (every 100 ms) finds the runs the test enqueues. Prints "ready" once
// connected; SIGTERM stops it after its current work.
import { closeDb, getDb } from "@/db/client";
import { EmbeddedExecutor } from "@/lib/engine/embedded-executor";

async function main(): Promise<void> {
  const executor = new EmbeddedExecutor({ getDb, concurrency: 2, sweepIntervalMs: 100 });
  await getDb();
  executor.start();
  console.log("ready");
  await new Promise<void>((resolve) => process.once("SIGTERM", () => resolve()));
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
