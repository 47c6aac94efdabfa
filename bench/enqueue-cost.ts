/**
 * What `POST /api/workflows/:id/run` costs against an empty Next.js POST route in the same build (issue 18, target 4:
 * ≤ 1.15×). The working tree is never touched: the benchmark checks a commit (`--ref`, default HEAD) out into a
 * temporary git worktree (node_modules hard-linked), adds an empty POST handler (a constant 202) there only — at a
 * static path, `app/api/zz-bench-empty/route.ts`, and at a path of the enqueue's shape,
 * `app/api/zz-bench-empty/[workflowId]/run/route.ts` — builds it with `next build`, starts `next start` in it, and
 * removes the worktree at the end (also on error). On PostgreSQL each build gets a fresh database, migrated by that
 * build's own `db/migrate-cli.ts`, dropped at the end.
 *
 *   npx tsx --conditions=react-server --tsconfig tsconfig.json bench/enqueue-cost.ts [--seconds 2] [--rounds 10] [--warmup 5]
 *       [--connections 24] [--port 3970] [--ref HEAD] [--baseline <commit>] [--routes enqueue,empty,dynamic] [--keep] [--reuse <dir>[,<dir>]]
 *     (DATABASE_URL set: fresh databases on that PostgreSQL server; unset: each server's embedded PGlite)
 *   --baseline <commit>   a second build of another commit on port+1, measured in the same minutes, interleaved
 *                         (old vs new, paired: this machine's speed drifts by ×2 between separate runs)
 *   --routes …            which routes to drive (e.g. `--routes enqueue` under SERVER_NODE_FLAGS="--cpu-prof …": a CPU
 *                         profile of the enqueue alone); `keyed` (not in the default) is the enqueue with a new
 *                         Idempotency-Key on every request (the general path)
 *   --keep / --reuse      leave the built worktrees in place / measure such trees again without checking out and building
 *
 * The same closed-loop client (keep-alive node:http, `--connections` requests back to back, a warm-up first) drives
 * each route for `--seconds`, `--rounds` times, in short interleaved rounds (enqueue / empty / dynamic, builds and
 * routes in ABBA order): the machine's speed changes within seconds, so the routes must share the same minutes.
 *
 * **The figure is the server's main thread's CPU time per request** (/proc/<pid>/task/<pid>/stat: utime + stime of the
 * thread that runs the event loop — Next.js, the route handler, the database driver's JavaScript and its socket or
 * worker messages), and the target's ratio is taken on it. The whole process's CPU (every thread: V8's GC and compiler
 * helpers, libuv's pool and, on PGlite, the worker thread that runs the database) is printed beside it with its own
 * ratio, and per thread name ("node": threads Node started at launch, V8's helpers among them; "next-server (v1…":
 * threads started after Next.js named the process, such as PGlite's worker). Why the main thread: the target asks
 * what our request path adds to the framework's, and the empty route has no database. On PostgreSQL the database's
 * CPU is in other processes and never counted, while PGlite's is a thread of the server: counting the whole process
 * charged the enqueue with the database's own work on PGlite only (ratio 2.10 against 1.28 on PostgreSQL,
 * 2026-11-25). The main thread is also the one that bounds a Node server's rate, and it is measured the same way on
 * both drivers. The empty route at a dynamic path tells how much of the ratio is Next.js's own handling of a path
 * parameter (route regexes built and matched per request), which no handler can avoid.
 *
 * The executor is held off during the measurement: the workflow's first run is left RUNNING, its OUTPUT's provider
 * call held open by a gate in front of the fake Resend, so the enqueued runs wait in the workflow's FIFO (their
 * wake-ups still happen: they are part of an enqueue's cost). On PostgreSQL a last 3 s of enqueues alone gives the
 * database transactions per enqueue (pg_stat_database). Last line: `BENCH_JSON {…}` (`ratio` is the main thread's,
 * `treeRatio` the whole process's, `baseline` the same figures for `--baseline`).
 */
import { execFileSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { startFakeResend } from "@/test/support/fake-resend";
import { api, loadAverage, mainThreadCpuMs, registerThroughApi, startServer, stopServer, threadCpuMs, treeCpuMs, uploadCsv } from "./server-support";

const ROUTE_NAMES_DEFAULT = "enqueue,empty,dynamic";
const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "2" },
    connections: { type: "string", default: "24" },
    port: { type: "string", default: "3970" },
    rounds: { type: "string", default: "10" },
    warmup: { type: "string", default: "5" },
    ref: { type: "string", default: "HEAD" },
    baseline: { type: "string" },
    routes: { type: "string", default: ROUTE_NAMES_DEFAULT },
    keep: { type: "boolean", default: false },
    reuse: { type: "string" },
  },
});
const SECONDS = Number(args.seconds);
const CONNECTIONS = Number(args.connections);
const PORT = Number(args.port);
const AUTH_SECRET = process.env.AUTH_SECRET ?? "bench-secret-bench-secret-bench-secret-0123";
const ROUTE_NAMES = ["enqueue", "empty", "dynamic", "keyed"] as const;
type RouteName = (typeof ROUTE_NAMES)[number];
let keyCount = 0;
const ROUTES = args.routes.split(",").map((name) => {
  if (!(ROUTE_NAMES as readonly string[]).includes(name)) throw new Error(`--routes: "${name}" is not one of ${ROUTE_NAMES.join(", ")}`);
  return name as RouteName;
});

/** A proxy in front of the fake Resend that, once `hold` is set, never answers a batch send (holds the run RUNNING). */
async function gate(target: string) {
  const state = { hold: false };
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    if (state.hold && req.url?.startsWith("/emails")) {
      held.push(res);
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const answer = await fetch(target + req.url, {
        method: req.method,
        headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => !["host", "content-length", "connection"].includes(k)) as [string, string][]),
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      });
      res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
      res.end(Buffer.from(await answer.arrayBuffer()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    state,
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Closed loop: CONNECTIONS requests back to back for `seconds`; answers the count of expected answers and others. */
async function load(port: number, method: string, p: string, token: string, expect: number, seconds: number, keyed = false) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const until = performance.now() + seconds * 1000;
  let ok = 0;
  let other = 0;
  const one = () =>
    new Promise<number>((resolve, reject) => {
      const headers: Record<string, string> = { authorization: `Bearer ${token}`, "content-length": "0" };
      if (keyed) headers["idempotency-key"] = `bench-${port}-${++keyCount}`;
      const req = http.request({ host: "127.0.0.1", port, path: p, method, agent, headers }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      });
      req.on("error", reject);
      req.end();
    });
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < until) {
        if ((await one()) === expect) ok++;
        else other++;
      }
    }),
  );
  agent.destroy();
  return { ok, other };
}

type Totals = { main: number; tree: number; n: number; other: number; threads: Record<string, number> };
type Build = {
  label: string;
  ref: string;
  tree: string;
  port: number;
  dataDir: string;
  databaseUrl?: string;
  dropDatabase?: () => Promise<void>;
  /** Transactions committed or rolled back in the build's database so far (PostgreSQL; each statement outside one counts one). */
  transactions?: () => Promise<number>;
  transactionsPerEnqueue?: number;
  server?: ChildProcess;
  token?: string;
  workflowId?: string;
  firstRunId?: string;
  totals: Record<RouteName, Totals>;
};

const sh = (cmd: string, argv: string[], cwd?: string) => execFileSync(cmd, argv, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();

/** A worktree of `ref` with the empty route added, built (or a tree from an earlier `--keep`). */
function prepareTree(ref: string, reuse: string | undefined): string {
  if (reuse) return reuse;
  const tree = mkdtempSync(path.join(os.tmpdir(), "flowmail-enqueue-cost-"));
  execFileSync("git", ["worktree", "add", "--detach", tree, ref], { stdio: "ignore" });
  // Hard links (same filesystem, no copy of the bytes): Turbopack refuses a node_modules symlinked from outside the tree.
  execFileSync("cp", ["-al", path.resolve("node_modules"), path.join(tree, "node_modules")]);
  // The same empty handler twice: at a static path, and at a path of the enqueue's shape (a dynamic segment, which
  // Next.js matches and parses per request).
  for (const dir of ["app/api/zz-bench-empty", "app/api/zz-bench-empty/[workflowId]/run"]) {
    mkdirSync(path.join(tree, dir), { recursive: true });
    writeFileSync(
      path.join(tree, dir, "route.ts"),
      "// Built only by bench/enqueue-cost.ts in a temporary worktree: the framework's own cost of a POST.\n" +
        "export async function POST(): Promise<Response> {\n  return Response.json({ ok: true }, { status: 202 });\n}\n",
    );
  }
  console.log(`building ${tree} (${ref} + an empty POST route)…`);
  execFileSync(process.execPath, ["node_modules/next/dist/bin/next", "build"], {
    cwd: tree,
    env: { ...process.env, NEXT_DIST_DIR: ".next", AUTH_SECRET },
    stdio: "ignore",
  });
  return tree;
}

function removeTree(tree: string): void {
  try {
    execFileSync("git", ["worktree", "remove", "--force", tree], { stdio: "ignore" });
  } catch {
    rmSync(tree, { recursive: true, force: true });
    execFileSync("git", ["worktree", "prune"], { stdio: "ignore" });
  }
}

/** A fresh database on DATABASE_URL's server, migrated by the build's own migrations (its commit's schema). */
async function freshDatabase(build: Build, serverUrl: string): Promise<void> {
  const name = `flowmail_bench_${randomBytes(5).toString("hex")}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  build.databaseUrl = url.toString();
  const stats = postgres(build.databaseUrl, { max: 1, onnotice: () => {} });
  build.transactions = async () => {
    // Backends report their counts at most once a second; the figure is read over whole rounds.
    const [row] = await stats.unsafe("select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()");
    return Number(row.n);
  };
  build.dropDatabase = async () => {
    await stats.end({ timeout: 1 });
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end({ timeout: 1 });
  };
  execFileSync(process.execPath, ["node_modules/tsx/dist/cli.mjs", "--conditions=react-server", "db/migrate-cli.ts"], {
    cwd: build.tree,
    env: { ...process.env, DATABASE_URL: build.databaseUrl, AUTH_SECRET, LOG_LEVEL: "error" },
    stdio: "ignore",
  });
}

/** Account, upload and a TRIGGER → DATA_SOURCE → OUTPUT workflow through the API (before the gate holds sends). */
async function setUp(build: Build, resend: Awaited<ReturnType<typeof startFakeResend>>): Promise<void> {
  const base = `http://127.0.0.1:${build.port}`;
  build.token = await registerThroughApi(base, resend, `cost-${build.label}`);
  const uploadId = await uploadCsv(base, build.token, "email\nheld@example.com\n");
  const graph = {
    nodes: [
      { id: "t", type: "TRIGGER", position: { x: 0, y: 0 }, data: {} },
      { id: "src", type: "DATA_SOURCE", position: { x: 200, y: 0 }, data: { uploadId } },
      { id: "out", type: "OUTPUT", position: { x: 400, y: 0 }, data: { forEach: "{{src.rows}}", to: "{{item.email}}", subject: "Held", body: "Held." } },
    ],
    edges: [
      { source: "t", target: "src" },
      { source: "src", target: "out" },
    ],
  };
  build.workflowId = (await api(base, "POST", "/api/workflows", { name: "enqueue cost", graph }, build.token)).id as string;
}

/** Enqueues the run the gate holds RUNNING; the enqueued runs then wait behind it in the workflow's FIFO. */
async function holdFirstRun(build: Build): Promise<void> {
  const base = `http://127.0.0.1:${build.port}`;
  build.firstRunId = (await api(base, "POST", `/api/workflows/${build.workflowId}/run`, undefined, build.token)).runId as string;
  for (let i = 0; i < 100; i++) {
    const run = await api(base, "GET", `/api/workflows/runs/${build.firstRunId}`, undefined, build.token);
    if (run.status === "RUNNING") return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

function routePath(build: Build, name: RouteName): string {
  if (name === "enqueue" || name === "keyed") return `/api/workflows/${build.workflowId}/run`;
  return name === "empty" ? "/api/zz-bench-empty" : `/api/zz-bench-empty/${build.workflowId}/run`;
}

async function measure(build: Build, name: RouteName, round: number): Promise<void> {
  const pid = build.server!.pid!;
  const main0 = mainThreadCpuMs(pid);
  const tree0 = treeCpuMs(pid);
  const threads0 = threadCpuMs(pid);
  const { ok: n, other } = await load(build.port, "POST", routePath(build, name), build.token!, 202, SECONDS, name === "keyed");
  const main = mainThreadCpuMs(pid) - main0;
  const tree = treeCpuMs(pid) - tree0;
  const t = build.totals[name];
  t.main += main;
  t.tree += tree;
  t.n += n;
  t.other += other;
  for (const [thread, ms] of Object.entries(threadCpuMs(pid))) t.threads[thread] = (t.threads[thread] ?? 0) + ms - (threads0[thread] ?? 0);
  const per = (ms: number) => (n ? ms / n : 0).toFixed(3);
  console.log(
    `  round ${round + 1} ${build.label.padEnd(8)} ${name.padEnd(7)} ${n} × 202 in ${SECONDS}s (${(n / SECONDS).toFixed(0)}/s), ${other} other answers, ` +
      `main thread ${per(main)} ms CPU/request, process ${per(tree)} ms  load ${loadAverage()}`,
  );
}

function summary(build: Build) {
  const per = (t: Totals, key: "main" | "tree") => (t.n ? t[key] / t.n : NaN);
  const e = build.totals.enqueue;
  const m = build.totals.empty;
  const d = build.totals.dynamic;
  const threads = (t: Totals) =>
    Object.entries(t.threads)
      .filter(([, ms]) => ms > 0)
      .sort((a, b) => b[1] - a[1])
      .map(([thread, ms]) => `${thread} ${(ms / t.n).toFixed(3)}`)
      .join(", ");
  return {
    label: build.label,
    ref: build.ref,
    enqueueCpuMs: per(e, "main"),
    emptyCpuMs: per(m, "main"),
    ratio: per(e, "main") / per(m, "main"),
    treeEnqueueCpuMs: per(e, "tree"),
    treeEmptyCpuMs: per(m, "tree"),
    treeRatio: per(e, "tree") / per(m, "tree"),
    dynamicCpuMs: per(d, "main"),
    treeDynamicCpuMs: per(d, "tree"),
    ratioToDynamic: per(e, "main") / per(d, "main"),
    keyedCpuMs: per(build.totals.keyed, "main"),
    keyedRatio: per(build.totals.keyed, "main") / per(m, "main"),
    enqueueTransactions: build.transactionsPerEnqueue,
    enqueueRequests: e.n,
    emptyRequests: m.n,
    dynamicRequests: d.n,
    enqueueThreads: threads(e),
    emptyThreads: threads(m),
  };
}

async function main() {
  const resend = await startFakeResend();
  const front = await gate(resend.url);
  const serverUrl = process.env.DATABASE_URL;
  const driver = serverUrl ? "postgres" : "pglite";
  const reuse = args.reuse?.split(",").map((dir) => path.resolve(dir)) ?? [];
  const refs = [args.ref, ...(args.baseline ? [args.baseline] : [])];
  const builds: Build[] = refs.map((ref, i) => ({
    label: i === 0 ? "build" : "baseline",
    ref: reuse[i] ? `${reuse[i]} (${sh("git", ["rev-parse", "--short", "HEAD"], reuse[i])})` : `${ref} (${sh("git", ["rev-parse", "--short", `${ref}^{commit}`])})`,
    tree: "",
    port: PORT + i,
    dataDir: mkdtempSync(path.join(os.tmpdir(), "flowmail-enqueue-cost-data-")),
    totals: Object.fromEntries(ROUTE_NAMES.map((name) => [name, { main: 0, tree: 0, n: 0, other: 0, threads: {} }])) as Record<RouteName, Totals>,
  }));
  let ok = false;
  try {
    for (const [i, build] of builds.entries()) build.tree = prepareTree(refs[i], reuse[i]);
    for (const build of builds) {
      if (serverUrl) await freshDatabase(build, serverUrl);
      const env: Record<string, string> = { NEXT_DIST_DIR: ".next", ...(build.databaseUrl ? { DATABASE_URL: build.databaseUrl } : {}) };
      build.server = await startServer(build.port, build.dataDir, front, env, build.tree);
      await setUp(build, resend);
    }
    front.state.hold = true;
    for (const build of builds) await holdFirstRun(build);

    for (const build of builds) for (const name of ROUTES) await load(build.port, "POST", routePath(build, name), build.token!, 202, Number(args.warmup), name === "keyed");
    const load0 = loadAverage();
    for (let round = 0; round < Number(args.rounds); round++) {
      // ABBA: the build measured first alternates, so a drift of the machine's speed within the run falls on both.
      const order = round % 2 === 0 ? builds : [...builds].reverse();
      for (const build of order) for (const name of round % 2 === 0 ? ROUTES : [...ROUTES].reverse()) await measure(build, name, round);
    }
    const load1 = loadAverage();
    for (const build of builds) {
      if (!build.transactions || !ROUTES.includes("enqueue")) continue;
      // Apart from the timed rounds: backends report their counts at most once a second.
      await new Promise((r) => setTimeout(r, 1100));
      const before = await build.transactions();
      const { ok: n } = await load(build.port, "POST", routePath(build, "enqueue"), build.token!, 202, 3);
      await new Promise((r) => setTimeout(r, 1100));
      build.transactionsPerEnqueue = ((await build.transactions()) - before - 1) / n;
    }
    const results = builds.map(summary);
    for (const [i, r] of results.entries()) {
      const still = await api(`http://127.0.0.1:${builds[i].port}`, "GET", `/api/workflows/runs/${builds[i].firstRunId}`, undefined, builds[i].token);
      console.log(
        `enqueue-cost: driver=${driver} ${r.label} ${r.ref}: main thread, ms CPU/request: enqueue ${r.enqueueCpuMs.toFixed(3)} (${r.enqueueRequests} requests), ` +
          `empty POST route ${r.emptyCpuMs.toFixed(3)} (${r.emptyRequests}), ratio=${r.ratio.toFixed(2)} (target ≤ 1.15); ` +
          `whole process ${r.treeEnqueueCpuMs.toFixed(3)} / ${r.treeEmptyCpuMs.toFixed(3)}, ratio ${r.treeRatio.toFixed(2)}; ` +
          `empty route at a dynamic path (Next.js's matching of /[workflowId]/) ${r.dynamicCpuMs.toFixed(3)} (${r.dynamicRequests}), enqueue ÷ it ${r.ratioToDynamic.toFixed(2)}` +
          `${r.enqueueTransactions !== undefined ? `; ${r.enqueueTransactions.toFixed(3)} transactions/enqueue` : ""}` +
          `${builds[i].totals.keyed.n ? `; with a new Idempotency-Key each ${r.keyedCpuMs.toFixed(3)} (${builds[i].totals.keyed.n}), ratio ${r.keyedRatio.toFixed(2)}` : ""}; held run still ${still.status}`,
      );
      console.log(`  threads, ms CPU/request: enqueue [${r.enqueueThreads}]  empty [${r.emptyThreads}]`);
      ok = (i === 0 || ok) && still.status === "RUNNING" && ROUTE_NAMES.every((name) => builds[i].totals[name].other === 0);
    }
    console.log(`load=${load0} → ${load1}; ${os.cpus().length} CPUs, Node ${process.version}`);
    const [primary, baseline] = results;
    console.log(`BENCH_JSON ${JSON.stringify({ bench: "enqueue-cost", driver, ...primary, ...(baseline ? { baseline } : {}), load: load1 })}`);
  } finally {
    for (const build of builds) {
      if (build.server) await stopServer(build.server);
      await build.dropDatabase?.().catch((error) => console.error("could not drop the bench database", error));
      if (build.tree && !reuse[builds.indexOf(build)]) {
        if (args.keep) console.log(`kept ${build.tree} (--reuse it; remove with \`git worktree remove --force ${build.tree}\`)`);
        else removeTree(build.tree);
      }
      rmSync(build.dataDir, { recursive: true, force: true });
    }
    await front.close();
    await resend.close();
  }
  process.exit(ok ? 0 : 1);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
