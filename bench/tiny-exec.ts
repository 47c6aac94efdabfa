/**
 * The executor's share of a tiny run, in process (no HTTP): 20 workflows TRIGGER → DATA_SOURCE (1 row) → OUTPUT (one
 * email to a fake Resend in a process of its own), N runs enqueued through the service first, then the embedded
 * executor is started and the clock runs until every run is finished. Prints runs/s and this process's CPU per run
 * (PGlite's worker thread included), postgres processes' CPU per run on PostgreSQL.
 *   npx tsx --conditions=react-server bench/tiny-exec.ts [runs=2000]   (DATABASE_URL=postgres://… for PostgreSQL)
 *   BENCH_CPU_PROFILE=file.cpuprofile writes a CPU profile of the executing alone.
 *   BENCH_ALS=N executes under N live AsyncLocalStorages, as the executor runs in the server (Next.js keeps several):
 *   on Node 20 they turn on promise hooks for every promise of the process, each store propagated at every promise.
 */
import os from "node:os";
import { benchAccount, benchDb, benchEnv, benchExit, benchUpload, benchWorkflow, startProfile } from "./bench-support";
import { startFakeResendProcess } from "./fake-provider-process";
import { postgresCpuMs } from "./server-support";

const RUNS = Number(process.argv[2] ?? 2000);
const WORKFLOWS = 20;

async function main() {
  const stores = Number(process.env.BENCH_ALS ?? 0);
  if (stores > 0) {
    const { AsyncLocalStorage } = await import("node:async_hooks");
    for (let i = 0; i < stores; i++) new AsyncLocalStorage<{ bench: number }>().enterWith({ bench: i });
  }
  const resend = await startFakeResendProcess();
  benchEnv({ RESEND_API_KEY: "re_bench", RESEND_BASE_URL: resend.url, EMAIL_DAILY_QUOTA: "10000000", EMAIL_RATE_PER_SECOND: "100000", RUN_RATE_LIMIT_PER_MINUTE: "1000000" });
  const { driver } = await benchDb();
  const { getBackgroundDb, getRunStateDb } = await import("@/db/client");
  const { enqueueRun } = await import("@/lib/engine/pg/enqueue-run");
  const { startEmbeddedExecutor, stopEmbeddedExecutor } = await import("@/lib/engine/drivers/embedded-executor");
  const accountId = await benchAccount();
  const uploadId = await benchUpload(accountId, ["email", "name"], 1, () => ["reader@example.com", "Reader"]);
  const workflowIds: string[] = [];
  for (let w = 0; w < WORKFLOWS; w++) {
    workflowIds.push(
      await benchWorkflow(accountId, {
        nodes: [
          { id: "t", type: "TRIGGER", data: {} },
          { id: "src", type: "DATA_SOURCE", data: { uploadId } },
          { id: "out", type: "OUTPUT", data: { forEach: "{{src.rows}}", to: `w${w}-{{item.email}}`, subject: "Hi {{item.name}}", body: "Tiny run.", dedupe: false } },
        ],
        edges: [
          { source: "t", target: "src" },
          { source: "src", target: "out" },
        ],
      }),
    );
  }
  const start = () => startEmbeddedExecutor({ getDb: getBackgroundDb, getRunStateDb, concurrency: WORKFLOWS, sweepIntervalMs: 3_600_000 });
  // Warm-up: one run per workflow.
  let executor = start();
  for (const id of workflowIds) await enqueueRun(accountId, id, undefined);
  await executor.idle();
  await stopEmbeddedExecutor();
  for (let i = 0; i < RUNS; i++) await enqueueRun(accountId, workflowIds[i % WORKFLOWS], undefined);
  const before = (await resend.figures()).delivered;
  const stopProfile = await startProfile();
  const onPostgres = driver === "postgres";
  const cpu = process.cpuUsage();
  const pg0 = onPostgres ? postgresCpuMs() : NaN;
  const started = performance.now();
  executor = start();
  for (const id of workflowIds) executor.poke(id);
  await executor.idle();
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const pgMs = onPostgres ? postgresCpuMs() - pg0 : NaN;
  await stopProfile();
  await stopEmbeddedExecutor();
  const delivered = (await resend.figures()).delivered - before;
  await resend.close();
  console.log(
    `tiny-exec: driver=${driver} runs=${RUNS} delivered=${delivered} time=${seconds.toFixed(2)}s rate=${(RUNS / seconds).toFixed(0)} runs/s ` +
      `CPU=${((used.user + used.system) / 1000 / RUNS).toFixed(2)} ms/run (user ${(used.user / 1000 / RUNS).toFixed(2)}, sys ${(used.system / 1000 / RUNS).toFixed(2)})` +
      `${onPostgres ? ` postgresCPU=${(pgMs / RUNS).toFixed(2)} ms/run` : ""}${stores > 0 ? ` asyncLocalStorages=${stores}` : ""} load=${os.loadavg().map((l) => l.toFixed(2)).join(",")}`,
  );
  await benchExit(delivered === RUNS ? 0 : 1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
