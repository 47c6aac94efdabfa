// 100,000-row CSV → FILTER (~40 % pass) → OUTPUT through the real Resend SDK to a local fake Resend.
// Measures enqueue → SUCCESS, time to the first email at the fake, this process's CPU time and peak RSS (the app side;
// the fake Resend runs in a process of its own, as the provider is on another machine) and the wall time per step kind.
// Usage: npx tsx --conditions=react-server bench/run-pipeline.ts   (DATABASE_URL=postgres://… for PostgreSQL)
// BENCH_CPU_PROFILE=file.cpuprofile: a CPU profile of this process from the enqueue to the run's end (not the set-up).
import os from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { benchAccount, benchDb, benchEnv, benchExit, benchUpload, benchWorkflow, mb, rssSampler, startProfile } from "./bench-support";
import { startFakeResendProcess } from "./fake-provider-process";
import { postgresCpuMs } from "./server-support";

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const BATCHES_IN_PARALLEL_NOTE = "8 in parallel";

async function main() {
  const resend = await startFakeResendProcess();
  // The fake here has no rate limit, so the provider pacing (EMAIL_RATE_PER_SECOND, default 5/s = 80 s for 400 calls)
  // is lifted: this benchmark measures the pipeline; test/faults/send-pacing.test.ts measures pacing.
  benchEnv({ RESEND_API_KEY: "re_bench", RESEND_BASE_URL: resend.url, EMAIL_DAILY_QUOTA: "10000000", EMAIL_RATE_PER_SECOND: "100000" });
  const { driver } = await benchDb();
  const { getBackgroundDb, getRunStateDb } = await import("@/db/client");
  const { getRun } = await import("@/lib/services/runs/get-run");
  const { enqueueRun } = await import("@/lib/engine/pg/enqueue-run");
  const { startEmbeddedExecutor, stopEmbeddedExecutor } = await import("@/lib/engine/drivers/embedded-executor");

  const accountId = await benchAccount();
  const uploadId = await benchUpload(accountId, ["name", "email", "rating", "comment"], ROWS, (i) => [
    `Person ${i}`,
    `person${i}@example.com`,
    String((i % 5) + 1), // ratings 1..5: "rating >= 4" keeps 40 %
    "Lorem ipsum dolor sit amet",
  ]);
  const workflowId = await benchWorkflow(accountId, {
    nodes: [
      { id: "t", type: "TRIGGER", data: {} },
      { id: "src", type: "DATA_SOURCE", data: { uploadId } },
      { id: "f", type: "FILTER", data: { source: "{{src.rows}}", expr: "rating >= 4" } },
      { id: "out", type: "OUTPUT", data: { forEach: "{{f.items}}", to: "{{item.email}}", subject: "Thanks {{item.name}}", body: "You rated us {{item.rating}}." } },
    ],
    edges: [
      { source: "t", target: "src" },
      { source: "src", target: "f" },
      { source: "f", target: "out" },
    ],
  });
  const timings: string[] = [];
  // Wall time per step kind (node:src, node:f, node:out, the OUTPUT's batches summed): where a run's time goes.
  const phases = new Map<string, number>();
  const step = {
    async run<T>(id: string, fn: () => Promise<T>): Promise<T> {
      const t0 = performance.now();
      try {
        return await fn();
      } finally {
        const ms = performance.now() - t0;
        const phase = id.replace(/:batch:\d+$/, ":batches");
        phases.set(phase, (phases.get(phase) ?? 0) + ms);
        if (process.env.BENCH_TRACE) timings.push(`${id}=${Math.round(ms)}ms`);
      }
    },
  };
  // Wired as the server wires it (lib/services/background/start-background-work.ts): the background lane on PGlite,
  // the run-state pool (commits without a WAL flush) on PostgreSQL.
  const executor = startEmbeddedExecutor({ getDb: getBackgroundDb, getRunStateDb, concurrency: 4, sweepIntervalMs: 3_600_000, step });
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const rss = rssSampler();
  const cpu = process.cpuUsage();
  const onPostgres = driver === "postgres";
  const pg0 = onPostgres ? postgresCpuMs() : NaN;
  const started = performance.now();
  const startedAt = Date.now();
  // How long the event loop was held (the run's own work: rendering, JSON, GC), which every request would wait for in
  // a server: a histogram, and each hold over 100 ms with when it began (from the enqueue).
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const holds: string[] = [];
  let lastTick = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    if (now - lastTick > 110) holds.push(`${Math.round(now - lastTick - 10)}ms@+${((lastTick - started) / 1000).toFixed(1)}s`);
    lastTick = now;
  }, 10);
  const stopProfile = await startProfile();
  const { run } = await enqueueRun(accountId, workflowId, undefined);
  await executor.idle();
  await stopProfile();
  clearInterval(ticker);
  loopDelay.disable();
  const seconds = (performance.now() - started) / 1000;
  const cpuUsed = process.cpuUsage(cpu);
  const pgCpuMs = onPostgres ? postgresCpuMs() - pg0 : NaN;
  const peak = rss.stop();
  const finished = await getRun(accountId, run.runId, "map");
  await stopEmbeddedExecutor();
  // What a poll of the finished run's view costs (its previews of the 100,000-row and 40,000-item outputs).
  const views: number[] = [];
  for (let i = 0; i < 10; i++) {
    const t0 = performance.now();
    await getRun(accountId, run.runId, "map");
    views.push(performance.now() - t0);
  }
  views.sort((a, b) => a - b);
  const figures = await resend.figures();
  const delivered = figures.delivered;
  const firstEmailMs = figures.firstEmailAt === null ? NaN : figures.firstEmailAt - startedAt;
  if (process.env.BENCH_TRACE) console.log(timings.join(" "));
  await resend.close();
  console.log(
    `run-pipeline: driver=${driver} rows=${ROWS} status=${finished.status} emailsSent=${finished.result?.emailsSent} delivered=${delivered} distinct=${figures.distinct} ` +
      `filteredOut=${finished.result?.filteredOut} enqueue→SUCCESS=${seconds.toFixed(2)}s firstEmail=${Math.round(firstEmailMs)}ms peakRSS=${mb(peak)}MB rssAtEnqueue=${mb(rssBefore)}MB ` +
      `CPU=${((cpuUsed.user + cpuUsed.system) / 1e6).toFixed(2)}s (this process; PGlite's thread included)${onPostgres ? ` postgresCPU=${(pgCpuMs / 1000).toFixed(2)}s (every postgres process)` : ""} load=${os.loadavg().map((l) => l.toFixed(2)).join(",")} ` +
      `(targets: ≤ 3 s PostgreSQL / ≤ 6 s PGlite, first email ≤ 1 s, peak RSS ≤ 512 MB PostgreSQL / ≤ 600 MB PGlite)`,
  );
  console.log(`  phases (wall ms; batches summed over ${BATCHES_IN_PARALLEL_NOTE}): ${[...phases].map(([k, ms]) => `${k}=${Math.round(ms)}`).join(" ")}`);
  console.log(`  GET of the finished run's view, 10 in a row: median ${views[5].toFixed(1)} ms, max ${views[9].toFixed(1)} ms`);
  const ms = (ns: number) => (ns / 1e6).toFixed(0);
  console.log(
    `  event loop held during the run (10 ms resolution): p50 ${ms(loopDelay.percentile(50))} ms, p99 ${ms(loopDelay.percentile(99))} ms, max ${ms(loopDelay.max)} ms; ` +
      `holds over 100 ms: ${holds.length ? holds.join(" ") : "none"}`,
  );
  console.log(
    `BENCH_JSON ${JSON.stringify({ bench: "run-pipeline", driver, rows: ROWS, status: finished.status, delivered, seconds, firstEmailMs, peakRssMb: mb(peak), load: os.loadavg()[0] })}`,
  );
  await benchExit(finished.status === "SUCCESS" && delivered === Math.round(ROWS * 0.4) && figures.distinct === delivered ? 0 : 1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
