// Enqueue throughput and latency of POST /api/workflows/:workflowId/run, measured in-process: the route handler is
// called with real Requests (auth, rate limit, snapshot insert, wake-up) by BENCH_CONCURRENCY concurrent callers.
// No executor runs, so this measures the enqueue path alone. (No HTTP server: a production build is not available
// to benchmarks here; see the report.)
// Usage: npx tsx --conditions=react-server bench/enqueue.ts   (DATABASE_URL=postgres://… for PostgreSQL)
import { benchAccount, benchDb, benchEnv, benchExit, benchUpload, benchWorkflow } from "./bench-support";

const TOTAL = Number(process.env.BENCH_TOTAL ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);

async function main() {
  benchEnv({ RUN_RATE_LIMIT_PER_MINUTE: "100000000" });
  const { driver } = await benchDb();
  const { signAccessToken } = await import("@/lib/auth/tokens");
  const { POST } = await import("@/app/api/workflows/[workflowId]/run/route");
  const accountId = await benchAccount();
  const uploadId = await benchUpload(accountId, ["email"], 1, () => ["a@example.com"]);
  const workflowId = await benchWorkflow(accountId, {
    nodes: [
      { id: "t", type: "TRIGGER", data: {} },
      { id: "src", type: "DATA_SOURCE", data: { uploadId } },
      { id: "out", type: "OUTPUT", data: { forEach: "{{src.rows}}", to: "{{item.email}}", subject: "s", body: "b" } },
    ],
    edges: [
      { source: "t", target: "src" },
      { source: "src", target: "out" },
    ],
  });
  const token = await signAccessToken(accountId);
  const once = async () => {
    const req = new Request(`http://localhost:3000/api/workflows/${workflowId}/run`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
    });
    const t0 = performance.now();
    const res = await POST(req, { params: Promise.resolve({ workflowId }) });
    const elapsed = performance.now() - t0;
    if (res.status !== 202) throw new Error(`enqueue answered ${res.status}: ${await res.text()}`);
    return elapsed;
  };
  for (let i = 0; i < 50; i++) await once(); // warm-up
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < TOTAL) {
        next++;
        latencies.push(await once());
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))].toFixed(1);
  console.log(
    `enqueue: driver=${driver} in-process requests=${TOTAL} concurrency=${CONCURRENCY} throughput=${Math.round(TOTAL / seconds)}/s ` +
      `p50=${pct(0.5)}ms p99=${pct(0.99)}ms max=${latencies[latencies.length - 1].toFixed(1)}ms (targets ≥1000/s, p99 ≤50ms)`,
  );
  await benchExit(0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
