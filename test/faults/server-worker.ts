// A Flowmail server process as far as runs are concerned, for the recovery fault tests: startBackgroundWork() (the
// executor lock on PostgreSQL, the embedded executor with its normal sweep) and the SIGTERM/SIGINT hand-back, exactly
// as instrumentation.ts starts them in `next start` (no HTTP server: the test process serves the API). Prints
// `READY <epoch ms> <executor key>` once it is ready, then lives until it is killed or signalled.
import { executorKey } from "@/lib/engine/pg/executor-lock";
import { installShutdownHandBack, startBackgroundWork } from "@/lib/services/background/start-background-work";

async function main(): Promise<void> {
  await startBackgroundWork();
  installShutdownHandBack();
  process.stdout.write(`READY ${Date.now()} ${executorKey() ?? "none"}\n`);
  setInterval(() => {}, 1 << 30);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(2);
});
