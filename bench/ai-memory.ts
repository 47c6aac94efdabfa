/**
 * Memory and responsiveness while a big AI node runs, by the freeze benchmark's rules (bench/freeze.ts): a server
 * process on the embedded PGlite (a fresh DATA_DIR) with the embedded executor, serving the app's route handlers over
 * real HTTP; a TRIGGER → DATA_SOURCE (ITEMS rows) → AI (forEach, one call per row) run against the OpenAI-compatible
 * fake (in this orchestrating process, so its work is not the server's); a poller in a child process of its own that
 * every 100 ms (each endpoint on its own clock) sends `POST /api/workflows/:tiny/run`, `GET /api/workflows/runs/:big`
 * and `GET /api/health` until the big run ends. Prints the server's peak RSS (sampled every 100 ms as freeze.ts samples
 * its server, peakRssSampler; target < 600 MB: the server process itself, since tsx's esbuild helper process, which
 * `next start` has not, is its child; the whole tree beside it) and p50/p99/max per endpoint (target: max ≤ 250 ms,
 * p99 ≤ 100 ms), beside the load average. Every 5 s the server prints what its memory is made of: V8's heap by space
 * (new: the young generation, which `npm start`'s semi-space flags let grow to 64 MB; old) and external memory.
 *
 * The server is not `next start` of a build (building is not done for a benchmark here): the same route handlers
 * called the way test/support/route-server.ts calls them, with the Node flags of `npm start`. Next's own request
 * handling adds a little CPU per request, no memory that grows with the run. tsx costs the server memory that a build
 * does not (a transpiled copy and a source map of each module in the heap: ~15 MB of a heap snapshot's strings), so the
 * harness errs against the target, not for it.
 *
 * Diagnostics: SERVER_NODE_FLAGS (space-separated) go to the server's Node (e.g. `--heapsnapshot-signal=SIGUSR2
 * --diagnostic-dir=/tmp/x`); BENCH_HEAP_PROFILE or BENCH_CPU_PROFILE (a file) profile the server from READY to the
 * run's end (bench-support's startProfile: allocations by call site, collected ones included); BENCH_LIVE_HEAP_PROFILE
 * (a file) records what occupies the heap instead, written when the old generation first holds BENCH_LIVE_HEAP_AT_MB,
 * else at the run's end. The poller's access token is renewed every BENCH_TOKEN_EVERY_MS (5 minutes; a token lasts 15).
 *
 *   npx tsx --conditions=react-server bench/ai-memory.ts [--items 100000] [--port 3710]
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import v8 from "node:v8";
import path from "node:path";
import { parseArgs } from "node:util";
import { loadAverage, ownRss, peakRssSampler, startScriptNodeFlags, treeCpuMs } from "./server-support";


const { values: args } = parseArgs({
  options: {
    items: { type: "string", default: process.env.BENCH_ITEMS ?? "100000" },
    port: { type: "string", default: "3710" },
    server: { type: "boolean", default: false },
  },
});
const ITEMS = Number(args.items);
const PORT = Number(args.port);

/** The server process: PGlite, the executor, the route handlers; sets up the account, upload and workflows. */
async function server() {
  const { benchAiAccount, benchEnv, benchUpload, benchWorkflow } = await import("./bench-support");
  benchEnv();
  const { getDb } = await import("@/db/client");
  const { signAccessToken } = await import("@/lib/auth/tokens");
  const { startEmbeddedExecutor } = await import("@/lib/engine/drivers/embedded-executor");
  const { serveRoutes } = await import("@/test/support/route-server");
  const accountId = await benchAiAccount({ provider: "openai-compatible", model: "bench-model", baseUrl: process.env.BENCH_AI_URL!, key: "sk-bench-memory-1234", maxConcurrency: 8 });
  const big = await benchUpload(accountId, ["name", "email", "company"], ITEMS, (i) => [`Person ${i}`, `person${i}@example.com`, `Company ${i % 977}`]);
  const tiny = await benchUpload(accountId, ["name", "email"], 1, () => ["Nobody", "nobody@example.com"]);
  const graph = (uploadId: string, withAi = true) => ({
    nodes: [
      { id: "t", type: "TRIGGER", data: {} },
      { id: "src", type: "DATA_SOURCE", data: { uploadId } },
      ...(withAi ? [{ id: "ai", type: "AI", data: { forEach: "{{src.rows}}", prompt: "One line of thanks for {{item.name}} of {{item.company}}", output: [{ name: "line", type: "string" }] } }] : []),
    ],
    edges: [{ source: "t", target: "src" }, ...(withAi ? [{ source: "src", target: "ai" }] : [])],
  });
  const routes = [
    { pattern: /^\/api\/health$/, module: await import("@/app/api/health/route") },
    { pattern: /^\/api\/workflows\/runs\/(?<runId>[^/]+)$/, module: await import("@/app/api/workflows/runs/[runId]/route") },
    { pattern: /^\/api\/workflows\/(?<workflowId>[^/]+)\/run$/, module: await import("@/app/api/workflows/[workflowId]/run/route") },
  ];
  startEmbeddedExecutor({ getDb, concurrency: 4, sweepIntervalMs: 3_600_000 });
  const served = await serveRoutes(routes, PORT);
  const setup = { url: served.url, token: await signAccessToken(accountId), big: await benchWorkflow(accountId, graph(big)), tiny: await benchWorkflow(accountId, graph(tiny, false)) };
  const { startProfile } = await import("./bench-support");
  const stopProfile = process.env.BENCH_LIVE_HEAP_PROFILE ? await liveHeapProfile(process.env.BENCH_LIVE_HEAP_PROFILE) : await startProfile();
  let profiled = false;
  const writeProfile = () => {
    if (profiled) return process.stdout.write("PROFILED\n");
    profiled = true;
    void stopProfile().then(() => process.stdout.write("PROFILED\n"));
  };
  process.on("SIGUSR2", writeProfile);
  // The live profile is written when the old generation first reaches BENCH_LIVE_HEAP_AT_MB (the top of its sawtooth).
  const liveAt = Number(process.env.BENCH_LIVE_HEAP_AT_MB ?? 0) * 2 ** 20;
  if (process.env.BENCH_LIVE_HEAP_PROFILE && liveAt > 0) {
    const timer = setInterval(() => {
      if ((v8.getHeapSpaceStatistics().find((s) => s.space_name === "old_space")?.space_used_size ?? 0) < liveAt) return;
      clearInterval(timer);
      writeProfile();
    }, 250);
  }
  process.stdout.write(`READY ${JSON.stringify(setup)}\n`);
  // An access token lasts 15 minutes and a big node under load runs longer: a fresh one every 5 minutes, for the poller.
  setInterval(() => void signAccessToken(accountId).then((token) => process.stdout.write(`TOKEN ${token}\n`)), Number(process.env.BENCH_TOKEN_EVERY_MS ?? 5 * 60_000)).unref();
  // What the server's memory is made of, every 5 s on stderr (V8's heap; external and array buffers hold PGlite's
  // WASM memory), so an RSS over the target says where it went.
  const mb = (b: number) => Math.round(b / 2 ** 20);
  setInterval(() => {
    const m = process.memoryUsage();
    const spaces = v8.getHeapSpaceStatistics().map((s) => `${s.space_name.replace("_space", "")}:${mb(s.space_size)}`).join(" ");
    process.stderr.write(`  server memory: rss ${mb(m.rss)} MB, heap ${mb(m.heapUsed)}/${mb(m.heapTotal)} MB [${spaces}], external ${mb(m.external)} MB, array buffers ${mb(m.arrayBuffers)} MB\n`);
  }, 5000).unref();
  setInterval(() => {}, 1 << 30);
}

/**
 * What occupies the heap when the profile stops, by allocation site: V8's sampling heap profiler without the objects
 * collected meanwhile, so old-generation garbage that no full collection has taken yet is in it (what RSS pays for).
 */
async function liveHeapProfile(file: string): Promise<() => Promise<void>> {
  const { Session } = await import("node:inspector/promises");
  const { writeFileSync } = await import("node:fs");
  const session = new Session();
  session.connect();
  await session.post("HeapProfiler.enable");
  await session.post("HeapProfiler.startSampling", { samplingInterval: 8192 });
  return async () => {
    const { profile } = await session.post("HeapProfiler.stopSampling");
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  };
}

/** The poller (plain node:http with keep-alive, in its own process), as bench/freeze.ts's. */
const POLLER = `
const http = require("node:http");
const [base, firstToken, bigWorkflow, tinyWorkflow] = process.argv.slice(1);
let token = firstToken;
// Fresh access tokens arrive on stdin, a line each (the first one expires after 15 minutes).
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (c) => {
  input += c;
  const lines = input.split("\\n");
  input = lines.pop();
  for (const line of lines) if (line) token = line;
});
process.stdin.unref();
const url = new URL(base);
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
function request(method, path) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request({ host: url.hostname, port: url.port, path, method, agent,
      headers: { authorization: "Bearer " + token, "content-length": "0" } }, (res) => {
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
  await request("GET", "/api/workflows/runs/run_warmup");
  await request("GET", "/api/health");
  await request("POST", "/api/workflows/" + tinyWorkflow + "/run");
  const enqueue = await request("POST", "/api/workflows/" + bigWorkflow + "/run");
  if (enqueue.status !== 202) throw new Error("enqueue answered " + enqueue.status + ": " + enqueue.body);
  const runId = JSON.parse(enqueue.body).runId;
  const t0 = performance.now();
  const samples = { "POST run": [], "GET run": [], "GET health": [] };
  const statuses = {};
  const slow = [];
  let done = false;
  let final;
  let lastProgress = "";
  const loop = async (name, method, path, onAnswer) => {
    while (!done) {
      const tick = performance.now();
      const answer = await request(method, path);
      samples[name].push(answer.ms);
      if (answer.ms > 100) slow.push({ name, atMs: Math.round(tick - t0), ms: Math.round(answer.ms) });
      statuses[name + " " + answer.status] = (statuses[name + " " + answer.status] ?? 0) + 1;
      if (onAnswer) onAnswer(answer);
      const wait = 100 - (performance.now() - tick);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  };
  const terminal = (answer) => {
    if (answer.status !== 200) return;
    const run = JSON.parse(answer.body);
    const p = run.nodes && run.nodes.ai && run.nodes.ai.progress;
    if (p && Math.floor(p.done / 10000) !== Math.floor(Number(lastProgress) / 10000)) process.stderr.write("  progress " + p.done + "/" + p.total + " at +" + Math.round((performance.now() - t0) / 1000) + " s\\n");
    if (p) lastProgress = String(p.done);
    if (["SUCCESS", "FAILED", "CANCELLED"].includes(run.status)) { done = true; final = run; }
  };
  await Promise.all([
    loop("POST run", "POST", "/api/workflows/" + tinyWorkflow + "/run"),
    loop("GET run", "GET", "/api/workflows/runs/" + runId, terminal),
    loop("GET health", "GET", "/api/health"),
  ]);
  const stats = {};
  for (const [name, list] of Object.entries(samples)) {
    const sorted = [...list].sort((a, b) => a - b);
    const at = (q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
    stats[name] = { n: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] };
  }
  process.stdout.write(JSON.stringify({ stats, statuses, slow, seconds: (performance.now() - t0) / 1000,
    run: { status: final.status, error: final.error, startedAt: final.startedAt, completedAt: final.completedAt, ai: final.result && final.result.ai } }));
})().catch((error) => { console.error(error); process.exit(1); });
`;

type Report = {
  stats: Record<string, { n: number; p50: number; p99: number; max: number }>;
  statuses: Record<string, number>;
  slow: { name: string; atMs: number; ms: number }[];
  seconds: number;
  run: { status: string; error: unknown; startedAt: string | null; completedAt: string | null; ai: { calls: number } | null };
};

async function main() {
  const { startFakeOpenAI } = await import("@/test/support/fake-openai");
  const ai = await startFakeOpenAI();
  ai.answer(() => ({ line: "Thanks for being with us." }));
  const dataDir = mkdtempSync(path.join(process.env.BENCH_TMP ?? os.tmpdir(), "flowmail-ai-memory-"));
  const child: ChildProcess = spawn(
    process.execPath,
    [...startScriptNodeFlags(), ...(process.env.SERVER_NODE_FLAGS ? process.env.SERVER_NODE_FLAGS.split(" ") : []), "--conditions=react-server", "--import", "tsx", "bench/ai-memory.ts", "--server", "--items", String(ITEMS), "--port", String(PORT)],
    { env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: "error", BENCH_AI_URL: ai.url, NODE_ENV: "production", RUN_RATE_LIMIT_PER_MINUTE: "100000000", RESEND_API_KEY: "re_bench", ALLOW_PRIVATE_NETWORK_TARGETS: "true", RESEND_BASE_URL: "http://127.0.0.1:9", AUTH_SECRET: process.env.AUTH_SECRET ?? "bench-secret-bench-secret-bench-secret-0123" }, stdio: ["ignore", "pipe", "inherit"] },
  );
  let ok = false;
  try {
    const setup = await new Promise<{ url: string; token: string; big: string; tiny: string }>((resolve, reject) => {
      let out = "";
      child.stdout!.setEncoding("utf8");
      child.stdout!.on("data", (c: string) => {
        out += c;
        const m = /READY (.+)\n/.exec(out);
        if (m) resolve(JSON.parse(m[1]) as { url: string; token: string; big: string; tiny: string });
      });
      child.on("exit", (code) => reject(new Error(`the server exited with ${code}`)));
    });
    const cpuBefore = treeCpuMs(child.pid!);
    // The server process's own RSS: tsx's esbuild helper process, which `next start` has not, is left out.
    const rssBefore = ownRss(child.pid!);
    const sampler = peakRssSampler(child.pid!);
    const loadBefore = loadAverage();
    const report = await new Promise<Report>((resolve, reject) => {
      const poller = spawn(process.execPath, ["-e", POLLER, setup.url, setup.token, setup.big, setup.tiny], { stdio: ["pipe", "pipe", "inherit"] });
      poller.stdin.on("error", () => {}); // a token written after the poller ended
      child.stdout!.on("data", (c: string) => {
        for (const m of c.matchAll(/^TOKEN (\S+)$/gm)) poller.stdin.write(`${m[1]}\n`);
      });
      let out = "";
      poller.stdout.setEncoding("utf8");
      poller.stdout.on("data", (c: string) => (out += c));
      poller.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out) as Report) : reject(new Error(`the poller exited with ${code}`))));
    });
    const { own: peakRss, tree: peakTree } = sampler.stop();
    const cpuSeconds = (treeCpuMs(child.pid!) - cpuBefore) / 1000;
    const runSeconds = report.run.startedAt && report.run.completedAt ? (Date.parse(report.run.completedAt) - Date.parse(report.run.startedAt)) / 1000 : NaN;
    const mb = (b: number) => `${Math.round(b / 2 ** 20)} MB`;
    const f = (ms: number) => `${Math.round(ms)}ms`;
    console.log(`ai-memory: pglite, ${ITEMS.toLocaleString("en")} items, run ${report.run.status}${report.run.error ? ` (${JSON.stringify(report.run.error)})` : ""}, ${report.run.ai?.calls ?? "?"} calls, ${ai.requests.length} requests at the fake`);
    console.log(`  run startedAt→completedAt ${runSeconds.toFixed(1)} s; server CPU ${cpuSeconds.toFixed(1)} s; server RSS ${mb(rssBefore)} before, peak ${mb(peakRss)} (target < 600 MB): ${peakRss < 600 * 2 ** 20 ? "met" : "NOT met"}; with tsx's esbuild process ${mb(peakTree)}`);
    let met = peakRss < 600 * 2 ** 20 && report.run.status === "SUCCESS";
    for (const [name, s] of Object.entries(report.stats)) {
      const good = s.max <= 250;
      met &&= good;
      console.log(`  ${name.padEnd(10)} n=${String(s.n).padStart(5)} p50=${f(s.p50).padStart(6)} p99=${f(s.p99).padStart(6)} max=${f(s.max).padStart(6)} ${good ? "met" : "NOT met"} (max ≤ 250ms; p99 ${s.p99 <= 100 ? "≤" : ">"} 100ms)`);
    }
    const slowest = [...report.slow].sort((a, b) => b.ms - a.ms).slice(0, 8).sort((a, b) => a.atMs - b.atMs);
    console.log(`  ${report.slow.length} answers over 100 ms; the slowest: ${slowest.map((s) => `${s.name} ${s.ms}ms at +${(s.atMs / 1000).toFixed(1)}s`).join(", ") || "none"}`);
    console.log(`  answers: ${Object.entries(report.statuses).map(([k, n]) => `${k}×${n}`).join(", ")}`);
    console.log(`  load average (1/5/15 min): before ${loadBefore}, after ${loadAverage()}, on ${os.cpus().length} cores`);
    ok = met;
  } finally {
    if (process.env.BENCH_HEAP_PROFILE || process.env.BENCH_CPU_PROFILE || process.env.BENCH_LIVE_HEAP_PROFILE) {
      child.kill("SIGUSR2");
      await new Promise((resolve) => { child.stdout!.on("data", (c: string) => c.includes("PROFILED") && resolve(undefined)); setTimeout(resolve, 60_000); });
    }
    child.kill("SIGKILL");
    await ai.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  process.exit(ok ? 0 : 1);
}

if (args.server) {
  server().catch((error: unknown) => {
    console.error(error);
    process.exit(2);
  });
} else {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
