// A 10-node graph on tiny data in the embedded executor (mailbox transport): enqueue → SUCCESS per run.
// Usage: npx tsx --conditions=react-server bench/tiny-graph.ts   (DATABASE_URL=postgres://… for PostgreSQL)
import { benchAccount, benchDb, benchEnv, benchExit, benchUpload, benchWorkflow } from "./bench-support";

const RUNS = Number(process.env.BENCH_RUNS ?? 20);

async function main() {
  benchEnv();
  const { driver } = await benchDb();
  const { getDb } = await import("@/db/client");
  const { getRun } = await import("@/lib/services/runs/get-run");
  const { enqueueRun } = await import("@/lib/engine/pg/enqueue-run");
  const { startEmbeddedExecutor, stopEmbeddedExecutor } = await import("@/lib/engine/drivers/embedded-executor");
  process.env.RUN_RATE_LIMIT_PER_MINUTE = "100000";
  (await import("@/lib/config")).resetConfig();

  const accountId = await benchAccount();
  const uploadId = await benchUpload(accountId, ["name", "email", "rating"], 5, (i) => [`P${i}`, `p${i}@example.com`, String(i + 1)]);
  const filters = Array.from({ length: 7 }, (_, i) => ({
    id: `f${i}`,
    type: "FILTER",
    data: { source: i === 0 ? "{{src.rows}}" : `{{f${i - 1}.items}}`, expr: `rating >= ${i === 0 ? 2 : 1}` },
  }));
  const workflowId = await benchWorkflow(accountId, {
    nodes: [
      { id: "t", type: "TRIGGER", data: {} },
      { id: "src", type: "DATA_SOURCE", data: { uploadId } },
      ...filters,
      { id: "out", type: "OUTPUT", data: { forEach: "{{f6.items}}", to: "{{item.email}}", subject: "Hi {{item.name}}", body: "x" } },
    ],
    edges: [
      { source: "t", target: "src" },
      { source: "src", target: "f0" },
      ...filters.slice(1).map((f, i) => ({ source: `f${i}`, target: f.id })),
      { source: "f6", target: "out" },
    ],
  });
  const executor = startEmbeddedExecutor({ getDb, concurrency: 4, sweepIntervalMs: 3_600_000 });
  const times: number[] = [];
  for (let i = 0; i < RUNS + 1; i++) {
    const started = performance.now();
    const { run } = await enqueueRun(accountId, workflowId, undefined);
    await executor.idle();
    const elapsed = performance.now() - started;
    const finished = await getRun(accountId, run.runId, "map");
    if (finished.status !== "SUCCESS") throw new Error(`run ${run.runId} ended ${finished.status}: ${finished.error}`);
    if (i > 0) times.push(elapsed); // the first run warms up code paths and caches
  }
  await stopEmbeddedExecutor();
  times.sort((a, b) => a - b);
  const pct = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))].toFixed(0);
  console.log(`tiny-graph: driver=${driver} nodes=10 runs=${RUNS} enqueue→SUCCESS median=${pct(0.5)}ms p90=${pct(0.9)}ms max=${times[times.length - 1].toFixed(0)}ms (limit 300ms)`);
  await benchExit(0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
