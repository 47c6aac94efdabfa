/**
 * Tiny-run throughput (issue 18, target 2), over HTTP against the production server (`next start` of a build in
 * NEXT_DIST_DIR). 20 workflows TRIGGER → DATA_SOURCE (a 1-row upload) → OUTPUT (to a local fake Resend, pacing
 * lifted) are made through the API; after the warm-up (`--warmup` rounds of one run per workflow, 100 by default,
 * then `--warmup-passes` unmeasured passes of the measured workload, 1 by default: a server that has been up a while
 * under this load, its hot code compiled), 2,000 runs are enqueued by 32 concurrent clients
 * (POST /api/workflows/:id/run, keep-alive), and the clock stops when the fake Resend has received all 2,000 emails
 * and `GET /api/runs?status=PENDING|RUNNING` are both empty (asked by one extra client every 10 ms once the emails are in). Then every run
 * must be SUCCESS (GET /api/runs?status=FAILED is empty) and each address got exactly one email per run.
 *
 *   NEXT_DIST_DIR=.next-x AUTH_SECRET=… npx next build       (once; then `git checkout tsconfig.json`)
 *   NEXT_DIST_DIR=.next-x npx tsx --conditions=react-server --tsconfig tsconfig.json bench/tiny-runs.ts [--runs 2000] [--port 3960]
 *     (DATABASE_URL set: a fresh database on that PostgreSQL server; unset: the server's embedded PGlite)
 *
 * Prints runs/s (first enqueue → all finished), the server process tree's CPU per run (app CPU; on PGlite without the
 * embedded database's worker thread, printed apart as pgliteThreadCPU), and on PostgreSQL the server's backends' CPU
 * per run (all `postgres` processes of the machine, read from /proc: run it on a quiet
 * machine) and transactions per run (pg_stat_database.xact_commit + xact_rollback of the bench database; each
 * statement outside a transaction is one). Targets: ≥ 400 runs/s PostgreSQL, ≥ 150 runs/s PGlite, ≤ 2 ms app CPU/run.
 * It also splits the clock at the last enqueue's answer: the emails (runs) delivered by then and in how many provider
 * calls, and the runs left after it with their rate and app CPU (execution alone: the server has no request but the
 * final polls). While 32 clients enqueue, each turn of the event loop serves up to 32 requests, and every step of a run
 * that waits for I/O waits a whole turn: the executor then finishes few runs, and the fewer steps a run has the more.
 * `--otlp`: the server traces, exporting to a local OTLP receiver (compare its app CPU per run with a run without it).
 * The last line is `BENCH_JSON {…}` for bench/compare.ts.
 */
import http from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { startFakeResend } from "@/test/support/fake-resend";
import { startOtlpReceiver } from "@/test/support/otlp-receiver";
import { benchDb, benchEnv, benchExit } from "./bench-support";
import { api, loadAverage, mainThreadCpuMs, postgresCpuMs, registerThroughApi, startServer, stopServer, treeCpuMs, uploadCsv, databaseThreadId, taskCpuMs } from "./server-support";

const { values: args } = parseArgs({
  options: {
    runs: { type: "string", default: "2000" },
    workflows: { type: "string", default: "20" },
    clients: { type: "string", default: "32" },
    port: { type: "string", default: "3960" },
    // Rounds of one run per workflow before the clock starts: the steady state of a server that has been up a while.
    // V8 optimizes a function once enough of its bytecode has run, and most of the run path runs once per run: after
    // 200 warm-up runs (the default until 2026-11-27) TurboFan still compiled ~470 functions during the 2,000 measured
    // runs (--trace-opt), each on a helper thread, and the server used 40 % more app CPU per run than after 2,000
    // warm-up runs (paired ×3, bench/README.md); 5,000 changed little more.
    warmup: { type: "string", default: "100" },
    // Then unmeasured passes of the measured workload itself (RUNS runs by CLIENTS clients): code that only 32 clients
    // at once reach (a full group commit, shared calls queued behind two in flight, many requests per turn) was still
    // being compiled during the measurement after the rounds alone (--trace-opt: ~255 TurboFan compilations, ~1.1 s on
    // V8's helper threads, 2026-11-27).
    "warmup-passes": { type: "string", default: "1" },
    // Tracing on: the server exports its spans (requests, runs, nodes, provider calls) over OTLP/HTTP to a local
    // receiver (test/support/otlp-receiver.ts), to compare its app CPU per run with the same bench without the flag.
    otlp: { type: "boolean", default: false },
  },
});
const RUNS = Number(args.runs);
const WORKFLOWS = Number(args.workflows);
const CLIENTS = Number(args.clients);
const PORT = Number(args.port);
const WARMUP = Number(args.warmup);
const WARMUP_PASSES = Number(args["warmup-passes"]);
const BASE = `http://127.0.0.1:${PORT}`;
const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS + 2 });

function request(method: string, p: string, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port: PORT, path: p, method, agent, headers: { authorization: `Bearer ${token}`, "content-length": "0" } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

async function main() {
  benchEnv();
  const resend = await startFakeResend();
  const onPostgres = Boolean(process.env.DATABASE_URL);
  if (onPostgres) await benchDb();
  const driver = onPostgres ? "postgres" : "pglite";
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "flowmail-tiny-runs-"));
  const otlp = args.otlp ? await startOtlpReceiver() : undefined;
  const server = await startServer(PORT, dataDir, resend, otlp ? { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url } : {});
  const stats = onPostgres ? postgres(process.env.DATABASE_URL!, { max: 1 }) : undefined;
  const transactions = async () => {
    if (!stats) return NaN;
    const [row] = await stats`select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()`;
    return Number(row.n);
  };
  let ok = false;
  try {
    const token = await registerThroughApi(BASE, resend, "tiny");
    const uploadId = await uploadCsv(BASE, token, "email,name\nreader@example.com,Reader\n");
    const workflowIds: string[] = [];
    for (let w = 0; w < WORKFLOWS; w++) {
      const graph = {
        nodes: [
          { id: "t", type: "TRIGGER", position: { x: 0, y: 0 }, data: {} },
          { id: "src", type: "DATA_SOURCE", position: { x: 200, y: 0 }, data: { uploadId } },
          { id: "out", type: "OUTPUT", position: { x: 400, y: 0 }, data: { forEach: "{{src.rows}}", to: `w${w}-{{item.email}}`, subject: "Hi {{item.name}}", body: "Tiny run.", dedupe: false } },
        ],
        edges: [
          { source: "t", target: "src" },
          { source: "src", target: "out" },
        ],
      };
      workflowIds.push((await api(BASE, "POST", "/api/workflows", { name: `tiny ${w}`, graph }, token)).id as string);
    }
    const finished = async () => {
      for (const status of ["PENDING", "RUNNING"]) {
        const page = JSON.parse((await request("GET", `/api/runs?status=${status}&limit=1`, token)).body) as { items: unknown[] };
        if (page.items.length > 0) return false;
      }
      return true;
    };
    const waitFinished = async (emails: number) => {
      for (;;) {
        // The server is asked only once every email is in (the fake counts them in this process), then every 10 ms: the
        // clock overshoots the last run's end by at most one poll.
        const delivered = resend.emails().length >= emails;
        if (delivered && (await finished())) return;
        await new Promise((r) => setTimeout(r, delivered ? 10 : 5));
      }
    };
    // RUNS runs enqueued by CLIENTS keep-alive clients, round-robin over the workflows; answers how many were refused.
    // `clientDone` runs as each client runs out of runs: its last call is when the last enqueue was answered.
    const enqueueRuns = async (clientDone = () => {}) => {
      let next = 0;
      let refused = 0;
      await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          while (next < RUNS) {
            const i = next++;
            if ((await request("POST", `/api/workflows/${workflowIds[i % WORKFLOWS]}/run`, token)).status !== 202) refused++;
          }
          clientDone();
        }),
      );
      return refused;
    };
    // Warm-up: rounds of one run per workflow (loads the routes' code, fills the caches, lets V8 optimize the run path).
    const emailsBefore = resend.emails().length;
    for (let round = 0; round < WARMUP; round++) await Promise.all(workflowIds.map((id) => request("POST", `/api/workflows/${id}/run`, token)));
    await waitFinished(emailsBefore + WORKFLOWS * WARMUP);
    for (let pass = 0; pass < WARMUP_PASSES; pass++) {
      const before = resend.emails().length;
      const refused = await enqueueRuns();
      await waitFinished(before + RUNS - refused);
    }

    const baseEmails = resend.emails().length;
    const baseCalls = resend.requests.length;
    const load0 = loadAverage();
    const app0 = treeCpuMs(server.pid!);
    const main0 = mainThreadCpuMs(server.pid!);
    // On PGlite the database is the server's worker thread: counted apart, as PostgreSQL's backends are.
    const dbTid = onPostgres ? undefined : databaseThreadId(server.pid!);
    const dbThreadCpu = () => (dbTid === undefined ? 0 : taskCpuMs(server.pid!, dbTid));
    const worker0 = dbThreadCpu();
    const pg0 = onPostgres ? postgresCpuMs() : NaN;
    const tx0 = await transactions();
    const self0 = process.cpuUsage();
    const started = performance.now();
    let enqueueDone = 0;
    // What the server had done when the last enqueue was answered: the rest of the clock is execution alone.
    let atEnqueueDone = { emails: 0, appMs: 0, mainMs: 0, calls: 0 };
    const refused = await enqueueRuns(() => {
      enqueueDone = performance.now();
      atEnqueueDone = {
        emails: resend.emails().length - baseEmails,
        appMs: treeCpuMs(server.pid!) - app0 - (dbThreadCpu() - worker0),
        mainMs: mainThreadCpuMs(server.pid!) - main0,
        calls: resend.requests.length - baseCalls,
      };
    });
    await waitFinished(baseEmails + RUNS - refused);
    const seconds = (performance.now() - started) / 1000;
    // This process's CPU (the 33 clients and the fake Resend): on a 2-core machine it is taken from the server's.
    const selfCpu = process.cpuUsage(self0);
    const benchMs = (selfCpu.user + selfCpu.system) / 1000;
    const dbThreadMs = dbThreadCpu() - worker0;
    const appMs = treeCpuMs(server.pid!) - app0 - dbThreadMs;
    const mainMs = mainThreadCpuMs(server.pid!) - main0;
    const pgMs = onPostgres ? postgresCpuMs() - pg0 : NaN;
    const tx = (await transactions()) - tx0;
    const failed = (JSON.parse((await request("GET", `/api/runs?status=FAILED&limit=100`, token)).body) as { items: unknown[] }).items.length;
    const sent = resend.emails().length - baseEmails;
    // Provider calls (the fake Resend's requests): below one per run when runs share calls (lib/nodes/output/shared-send.ts).
    const calls = resend.requests.length - baseCalls;
    const rate = RUNS / seconds;
    const tailRuns = RUNS - atEnqueueDone.emails;
    const tailSeconds = seconds - (enqueueDone - started) / 1000;
    const tail = `after the enqueues: ${tailRuns} runs in ${tailSeconds.toFixed(2)}s (${(tailRuns / tailSeconds).toFixed(0)} runs/s, app CPU ${((appMs - atEnqueueDone.appMs) / Math.max(1, tailRuns)).toFixed(2)} ms/run, main thread ${((mainMs - atEnqueueDone.mainMs) / Math.max(1, tailRuns)).toFixed(2)})`;
    // The server's CPU apart from its main thread: V8's GC and compiler helper threads (and PGlite's worker).
    const threads = `main thread ${(mainMs / RUNS).toFixed(2)}, other threads ${((appMs - mainMs) / RUNS).toFixed(2)}; during the enqueues main ${atEnqueueDone.mainMs.toFixed(0)} ms, other ${(atEnqueueDone.appMs - atEnqueueDone.mainMs).toFixed(0)} ms`;
    const perRun = (x: number) => (Number.isFinite(x) ? (x / RUNS).toFixed(2) : "n/a");
    const target = onPostgres ? 400 : 150;
    console.log(
      `tiny-runs: driver=${driver}${otlp ? ` tracing=otlp (${otlp.spans.length} spans received)` : ""} runs=${RUNS} warmup=${WARMUP * WORKFLOWS}+${WARMUP_PASSES}×${RUNS} workflows=${WORKFLOWS} clients=${CLIENTS} refused=${refused} failed=${failed} emails=${sent} ` +
        `time=${seconds.toFixed(2)}s (enqueues done at ${((enqueueDone - started) / 1000).toFixed(2)}s, ${atEnqueueDone.emails} emails sent by then in ${atEnqueueDone.calls} provider calls; ${tail}) rate=${rate.toFixed(0)} runs/s (target ≥ ${target}) ` +
        `appCPU=${perRun(appMs)} ms/run (target ≤ 2; ${threads}) ${onPostgres ? `postgresCPU=${perRun(pgMs)}` : `pgliteThreadCPU=${perRun(dbThreadMs)}`} ms/run transactions=${perRun(tx)}/run providerCalls=${(calls / RUNS).toFixed(2)}/run benchCPU=${perRun(benchMs)} ms/run load=${load0} → ${loadAverage()}`,
    );
    console.log(
      `BENCH_JSON ${JSON.stringify({ bench: "tiny-runs", driver, tracing: Boolean(otlp), runs: RUNS, warmupRuns: WARMUP * WORKFLOWS + WARMUP_PASSES * RUNS, seconds, runsPerSecond: rate, appCpuMsPerRun: appMs / RUNS, mainThreadCpuMsPerRun: mainMs / RUNS, postgresCpuMsPerRun: onPostgres ? pgMs / RUNS : null, pgliteThreadCpuMsPerRun: onPostgres ? null : dbThreadMs / RUNS, transactionsPerRun: onPostgres ? tx / RUNS : null, providerCallsPerRun: calls / RUNS, failed, refused, load: loadAverage() })}`,
    );
    ok = refused === 0 && failed === 0 && sent === RUNS;
  } finally {
    agent.destroy();
    await stats?.end();
    await stopServer(server);
    await resend.close();
    await otlp?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  await benchExit(ok ? 0 : 1);
}

main().catch(async (error: unknown) => {
  console.error(error);
  await benchExit(1);
});
