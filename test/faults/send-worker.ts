// An app instance for the pacing fault test: the embedded executor against DATABASE_URL (PostgreSQL), sending through
// the Resend SDK to RESEND_BASE_URL. Its sweep (every 100 ms) finds the runs the test enqueues. Prints "ready" once
// connected; SIGTERM stops it after its current work.
import { runExecutorProcess } from "./executor-process";

runExecutorProcess(100, async (executor) => {
  executor.start();
  console.log("ready");
  await new Promise<void>((resolve) => process.once("SIGTERM", () => resolve()));
});
