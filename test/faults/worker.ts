// A separate Flowmail executor process for the kill -9 fault test: the embedded executor against DATABASE_URL
// (PostgreSQL) or DATA_DIR (PGlite), started the way a restarted server starts it. It takes over every RUNNING run
// at once (staleness 0 s: the test guarantees the previous executor is dead), works until idle, then exits 0.
import { runExecutorProcess } from "./executor-process";

runExecutorProcess(3_600_000, async (executor) => {
  await executor.sweep(0);
  await executor.idle();
});
