/**
 * Does a big run freeze the server? (issue 18, target 1). Starts the production server (`next start` of a build in
 * NEXT_DIST_DIR), registers through the API (the OTP from a local fake Resend, which also receives the run's emails),
 * uploads a BENCH_ROWS-row CSV, makes a CSV → FILTER (rating >= 4: 40 %) → OUTPUT workflow and a tiny one, and hands
 * both to a poller in a child process. The poller enqueues the big run, then every 100 ms (each endpoint on its own
 * clock, never two of one in flight) sends `POST /api/workflows/:tiny/run`, `GET /api/workflows/runs/:bigRun` and
 * `GET /api/health` until the big run is finished, and prints p50/p99/max per endpoint. Each of those routes is
 * requested once before the enqueue (the first request of a route after the server starts loads its code).
 *
 *   NEXT_DIST_DIR=.next-e AUTH_SECRET=… npx next build      (once; then `git checkout tsconfig.json`)
 *   NEXT_DIST_DIR=.next-e npx tsx --conditions=react-server --tsconfig tsconfig.json bench/freeze.ts [--rows 100000] [--port 3700]
 *     (DATABASE_URL set: a fresh database on that PostgreSQL server; unset: the server's embedded PGlite in a fresh DATA_DIR)
 *
 * Target: p99 ≤ 100 ms and max ≤ 250 ms for each endpoint while the run executes. Also printed: the run's duration
 * (its startedAt → completedAt), the server's CPU time during the run and the load average (wall-clock figures on a
 * loaded machine mean little: read them beside the load).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { startFakeResend, type FakeResend } from "@/test/support/fake-resend";
import { benchDb, benchEnv, benchExit } from "./bench-support";
import { api, loadAverage, peakRssSampler, registerThroughApi, startServer, stopServer, treeCpuMs, uploadCsv } from "./server-support";

const { values: args } = parseArgs({
  options: { rows: { type: "string", default: process.env.BENCH_ROWS ?? "100000" }, port: { type: "string", default: "3700" }, interval: { type: "string", default: "100" } },
});
const ROWS = Number(args.rows);
const PORT = Number(args.port);
const BASE = `http://127.0.0.1:${PORT}`;

/** The poller: plain node:http with keep-alive, in its own process so that its timers do not share our event loop. */
const POLLER = `
const http = require("node:http");
const [base, token, bigWorkflow, tinyWorkflow, interval] = process.argv.slice(1);
const url = new URL(base);
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
function request(method, path, auth) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request({ host: url.hostname, port: url.port, path, method, agent,
      headers: auth ? { authorization: "Bearer " + token, "content-length": "0" } : {} }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode, body, ms: performance.now() - started }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}
(async () => {
  // Each polled route once before the measurement: a route's first request after the server starts loads its code
  // (40–110 ms of module instantiation), a cold start that is not the big run's doing.
  await request("GET", "/api/workflows/runs/run_warmup", true);
  await request("GET", "/api/health", false);
  await request("POST", "/api/workflows/" + tinyWorkflow + "/run", true);
  const enqueue = await request("POST", "/api/workflows/" + bigWorkflow + "/run", true);
  if (enqueue.status !== 202) throw new Error("enqueue answered " + enqueue.status + ": " + enqueue.body);
  const runId = JSON.parse(enqueue.body).runId;
  const t0 = performance.now();
  const t0Wall = new Date().toISOString();
  const slow = [];
  const samples = { "POST run": [], "GET run": [], "GET health": [] };
  const statuses = {};
  let done = false;
  let finalBody;
  const loop = async (name, method, path, auth, onAnswer) => {
    while (!done) {
      const tick = performance.now();
      const answer = await request(method, path, auth);
      samples[name].push(answer.ms);
      if (answer.ms > 100) slow.push({ name, atMs: Math.round(tick - t0), ms: Math.round(answer.ms) });
      statuses[name + " " + answer.status] = (statuses[name + " " + answer.status] ?? 0) + 1;
      if (onAnswer) onAnswer(answer);
      const wait = Number(interval) - (performance.now() - tick);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  };
  const terminal = (answer) => {
    if (answer.status !== 200) return;
    const run = JSON.parse(answer.body);
    if (["SUCCESS", "FAILED", "CANCELLED"].includes(run.status)) { done = true; finalBody = run; }
  };
  await Promise.all([
    loop("POST run", "POST", "/api/workflows/" + tinyWorkflow + "/run", true),
    loop("GET run", "GET", "/api/workflows/runs/" + runId, true, terminal),
    loop("GET health", "GET", "/api/health", false),
  ]);
  const stats = {};
  for (const [name, list] of Object.entries(samples)) {
    const sorted = [...list].sort((a, b) => a - b);
    const at = (q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
    stats[name] = { n: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] };
  }
  process.stdout.write(JSON.stringify({ runId, enqueueMs: enqueue.ms, t0Wall, stats, statuses, slow,
    run: { status: finalBody.status, startedAt: finalBody.startedAt, completedAt: finalBody.completedAt, result: finalBody.result } }));
})().catch((error) => { console.error(error); process.exit(1); });
`;

async function setUp(resend: FakeResend) {
  const token = await registerThroughApi(BASE, resend, "freeze");
  const upload = (csv: string) => uploadCsv(BASE, token, csv);
  const lines = ["name,email,rating,comment"];
  for (let i = 0; i < ROWS; i++) lines.push(`Person ${i},person${i}@example.com,${(i % 5) + 1},Lorem ipsum dolor sit amet`);
  const big = await upload(lines.join("\n") + "\n");
  const tiny = await upload("email\nnobody@example.com\n");
  const at = (x: number) => ({ x, y: 0 });
  const workflow = async (name: string, uploadId: string, expr: string, subject: string, body: string) =>
    (
      await api(
        BASE,
        "POST",
        "/api/workflows",
        {
          name,
          graph: {
            nodes: [
              { id: "t", type: "TRIGGER", position: at(0), data: {} },
              { id: "src", type: "DATA_SOURCE", position: at(200), data: { uploadId } },
              { id: "f", type: "FILTER", position: at(400), data: { source: "{{src.rows}}", expr } },
              { id: "out", type: "OUTPUT", position: at(600), data: { forEach: "{{f.items}}", to: "{{item.email}}", subject, body } },
            ],
            edges: [
              { source: "t", target: "src" },
              { source: "src", target: "f" },
              { source: "f", target: "out" },
            ],
          },
        },
        token,
      )
    ).id as string;
  return {
    token,
    bigWorkflow: await workflow("bench freeze: big", big, "rating >= 4", "Thanks {{item.name}}", "You rated us {{item.rating}}."),
    tinyWorkflow: await workflow("bench freeze: tiny", tiny, "false", "Hello", "Nothing to say."),
  };
}

type PollerReport = {
  runId: string;
  enqueueMs: number;
  stats: Record<string, { n: number; p50: number; p99: number; max: number }>;
  statuses: Record<string, number>;
  slow: { name: string; atMs: number; ms: number }[];
  t0Wall: string;
  run: { status: string; startedAt: string | null; completedAt: string | null; result: { emailsSent?: number } | null };
};

function poll(token: string, bigWorkflow: string, tinyWorkflow: string): Promise<PollerReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", POLLER, BASE, token, bigWorkflow, tinyWorkflow, args.interval!], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (c: string) => (out += c));
    child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out) as PollerReport) : reject(new Error(`the poller exited with ${code}`))));
  });
}

async function main() {
  benchEnv();
  const resend = await startFakeResend();
  const driver = process.env.DATABASE_URL ? (await benchDb()).driver : "pglite";
  const dataDir = mkdtempSync(path.join(process.env.BENCH_TMP ?? os.tmpdir(), "flowmail-freeze-"));
  const server = await startServer(PORT, dataDir, resend);
  let ok = false;
  try {
    const { token, bigWorkflow, tinyWorkflow } = await setUp(resend);
    const cpuBefore = treeCpuMs(server.pid!);
    const sampler = peakRssSampler(server.pid!);
    const loadBefore = loadAverage();
    const wall = performance.now();
    const report = await poll(token, bigWorkflow, tinyWorkflow);
    const wallSeconds = (performance.now() - wall) / 1000;
    const peakRss = sampler.stop().tree;
    const cpuSeconds = (treeCpuMs(server.pid!) - cpuBefore) / 1000;
    const runSeconds = report.run.startedAt && report.run.completedAt ? (Date.parse(report.run.completedAt) - Date.parse(report.run.startedAt)) / 1000 : NaN;
    const f = (ms: number) => `${Math.round(ms)}ms`;
    console.log(`freeze: driver=${driver} rows=${ROWS} run=${report.run.status} emailsSent=${report.run.result?.emailsSent} delivered=${resend.emails().filter((e) => e.batch).length}`);
    console.log(`  enqueue of the big run: ${f(report.enqueueMs)}; run startedAt→completedAt ${runSeconds.toFixed(2)}s; polled ${wallSeconds.toFixed(2)}s; server CPU ${cpuSeconds.toFixed(2)}s; server peak RSS ${Math.round(peakRss / 2 ** 20)}MB`);
    for (const [name, s] of Object.entries(report.stats)) {
      const met = s.p99 <= 100 && s.max <= 250;
      console.log(`  ${name.padEnd(10)} n=${String(s.n).padStart(4)} p50=${f(s.p50).padStart(6)} p99=${f(s.p99).padStart(6)} max=${f(s.max).padStart(6)} ${met ? "met" : "NOT met"} (p99 ≤ 100ms, max ≤ 250ms)`);
    }
    const slowest = [...report.slow].sort((a, b) => b.ms - a.ms).slice(0, 8).sort((a, b) => a.atMs - b.atMs);
    const slow = slowest.map((s) => `${s.name} ${s.ms}ms at +${(s.atMs / 1000).toFixed(1)}s`).join(", ");
    console.log(`  ${report.slow.length} answers over 100 ms; the slowest, by when they were sent (from the enqueue's answer at ${report.t0Wall}): ${slow || "none"}`);
    console.log(`  answers: ${Object.entries(report.statuses).map(([k, n]) => `${k}×${n}`).join(", ")}`);
    console.log(`  load average (1/5/15 min): before ${loadBefore}, after ${loadAverage()}`);
    console.log(`BENCH_JSON ${JSON.stringify({ bench: "freeze", driver, rows: ROWS, status: report.run.status, runSeconds, peakRssMb: Math.round(peakRss / 2 ** 20), stats: report.stats, load: loadAverage() })}`);
    ok = report.run.status === "SUCCESS" && Object.keys(report.statuses).every((k) => / (200|202)$/.test(k));
  } finally {
    await stopServer(server);
    await resend.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  await benchExit(ok ? 0 : 1);
}

main().catch(async (error: unknown) => {
  console.error(error);
  await benchExit(1);
});
