// An app instance for the schedule fault test: the embedded executor (its sweep enqueues due schedule slots and runs
// them) against DATABASE_URL, on a fast clock shared by every instance of the test, so schedule minutes pass in
// seconds while the sweep really runs: virtual now = CLOCK_T0 + (Date.now() − CLOCK_T0) × CLOCK_SPEED. Runs until killed.
// With WAIT_FOR_GO=1 it loads, prints "loaded" and starts only when "go" arrives on stdin: a process start takes
// seconds of real time on a busy machine (minutes of schedule time), so standby instances are loaded in advance.
import { closeDb, getDb } from "@/db/client";
import { setClock } from "@/lib/clock";
import { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { SWEEP_TASKS } from "@/lib/services/background/start-background-work";

function waitForGo(): Promise<void> {
  return new Promise((resolve) => {
    process.stdin.on("data", (chunk: Buffer) => chunk.toString().includes("go") && resolve());
  });
}

async function main(): Promise<void> {
  const t0 = Number(process.env.CLOCK_T0);
  const speed = Number(process.env.CLOCK_SPEED);
  if (!Number.isFinite(t0) || !(speed >= 1)) throw new Error("CLOCK_T0 and CLOCK_SPEED are required");
  setClock(() => t0 + (Date.now() - t0) * speed);
  await getDb();
  process.stdout.write("loaded\n");
  if (process.env.WAIT_FOR_GO === "1") await waitForGo();
  const executor = new EmbeddedExecutor({ getDb, concurrency: 2, sweepIntervalMs: Number(process.env.SWEEP_INTERVAL_MS ?? 250), sweepTasks: SWEEP_TASKS });
  executor.start();
  process.stdout.write("ready\n");
  process.on("SIGTERM", () => void executor.stop().then(closeDb).then(() => process.exit(0)));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(2);
});
