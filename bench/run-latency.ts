// GET /api/workflows/runs/:runId latency while 4 workflows execute at once in the embedded executor (mailbox
// transport): 4 runs of BENCH_ROWS-row uploads → FILTER (~40% pass) → OUTPUT are enqueued together, and one poller per
// run calls the GET route handler back to back (real Requests: auth, run + node results + logs) until all 4 are
// terminal. In-process (route handlers, no HTTP server), so the figure is the handler's own latency under engine load
// (the embedded executor shares the event loop, as in a `next start` process); idle-p50 is the same GET afterwards.
// Usage: npx tsx --conditions=react-server bench/run-latency.ts   (DATABASE_URL=postgres://… for PostgreSQL;
//        BENCH_ROWS=5000 rows per upload)
import os from "node:os";
import { benchAccount, benchDb, benchEnv, benchExit, benchUpload, benchWorkflow } from "./bench-support";

const ROWS = Number(process.env.BENCH_ROWS ?? 5000);
const WORKFLOWS = 4;

async function main() {
  // The daily email quota (default 10,000) would fail the OUTPUT nodes of 4 runs of 20,000 rows.
  benchEnv({ RUN_RATE_LIMIT_PER_MINUTE: "100000", EXECUTOR_CONCURRENCY: String(WORKFLOWS), EMAIL_DAILY_QUOTA: "10000000" });
  const { driver } = await benchDb();
  const { getDb } = await import("@/db/client");
  const { signAccessToken } = await import("@/lib/auth/tokens");
  const { enqueueRun } = await import("@/lib/engine/pg/enqueue-run");
  const { GET } = await import("@/app/api/workflows/runs/[runId]/route");
  const { startEmbeddedExecutor, stopEmbeddedExecutor } = await import("@/lib/engine/drivers/embedded-executor");

  const accountId = await benchAccount();
  const token = await signAccessToken(accountId);
  const runIds: string[] = [];
  const workflowIds: string[] = [];
  for (let w = 0; w < WORKFLOWS; w++) {
    const uploadId = await benchUpload(accountId, ["name", "email", "score"], ROWS, (i) => [`P${i}`, `p${w}-${i}@example.com`, String(i % 10)]);
    workflowIds.push(
      await benchWorkflow(accountId, {
        nodes: [
          { id: "t", type: "TRIGGER", data: {} },
          { id: "src", type: "DATA_SOURCE", data: { uploadId } },
          { id: "f", type: "FILTER", data: { source: "{{src.rows}}", expr: "score >= 6" } },
          { id: "out", type: "OUTPUT", data: { forEach: "{{f.items}}", to: "{{item.email}}", subject: "Hi {{item.name}}", body: "b" } },
        ],
        edges: [
          { source: "t", target: "src" },
          { source: "src", target: "f" },
          { source: "f", target: "out" },
        ],
      }),
    );
  }
  const get = async (runId: string) => {
    const t0 = performance.now();
    const res = await GET(new Request(`http://localhost:3000/api/workflows/runs/${runId}`, { headers: { authorization: `Bearer ${token}` } }), {
      params: Promise.resolve({ runId }),
    });
    const body = (await res.json()) as { status: string };
    if (res.status !== 200) throw new Error(`GET run answered ${res.status}: ${JSON.stringify(body)}`);
    return { ms: performance.now() - t0, status: body.status };
  };

  const executor = startEmbeddedExecutor({ getDb, concurrency: WORKFLOWS, sweepIntervalMs: 3_600_000 });
  const started = performance.now();
  for (const workflowId of workflowIds) runIds.push((await enqueueRun(accountId, workflowId, undefined)).run.runId);
  const latencies: number[] = [];
  const finals: string[] = [];
  await Promise.all(
    runIds.map(async (runId) => {
      for (;;) {
        const { ms, status } = await get(runId);
        latencies.push(ms);
        if (status !== "PENDING" && status !== "RUNNING") return void finals.push(status);
      }
    }),
  );
  const wall = (performance.now() - started) / 1000;
  await executor.idle();
  await stopEmbeddedExecutor();
  if (finals.some((s) => s !== "SUCCESS")) throw new Error(`runs ended ${finals.join(",")}`);
  // The same GETs with nothing executing: what the engine's load adds to the figure above.
  const idle: number[] = [];
  for (let i = 0; i < 40; i++) idle.push((await get(runIds[i % WORKFLOWS])).ms);
  idle.sort((a, b) => a - b);
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))].toFixed(1);
  console.log(
    `run-latency: driver=${driver} workflows=${WORKFLOWS} rows=${ROWS} gets=${latencies.length} p50=${pct(0.5)}ms p99=${pct(0.99)}ms ` +
      `max=${latencies[latencies.length - 1].toFixed(1)}ms runs-wall=${wall.toFixed(1)}s idle-p50=${idle[20].toFixed(1)}ms load=${os.loadavg().map((l) => l.toFixed(2)).join(",")}`,
  );
  await benchExit(0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
