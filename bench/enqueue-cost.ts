/**
 * What `POST /api/workflows/:id/run` costs against an empty Next.js POST route in the same build (issue 18, target 4:
 * ≤ 1.15×). The working tree is never touched: the benchmark checks the current commit out into a temporary git
 * worktree (node_modules hard-linked), adds `app/api/zz-bench-empty/route.ts` (a POST that answers a constant 202) there
 * only, builds it with `next build`, starts `next start` in it, and removes the worktree at the end (also on error).
 *
 *   npx tsx --conditions=react-server --tsconfig tsconfig.json bench/enqueue-cost.ts [--seconds 10] [--connections 24] [--port 3970]
 *     (DATABASE_URL set: a fresh database on that PostgreSQL server; unset: the server's embedded PGlite)
 *
 * The same closed-loop client (keep-alive node:http, `--connections` requests back to back, 2 s warm-up) drives each
 * route for `--seconds`, alternating enqueue / empty / enqueue / empty; the figure is the server process tree's CPU
 * time per request (/proc: utime + stime, every thread, the embedded database's worker included), which depends far
 * less on the machine's other load than the request rate does. The executor is held off during the measurement: the
 * workflow's first run is left RUNNING, its OUTPUT's provider call held open by a gate in front of the fake Resend, so
 * the enqueued runs wait in the workflow's FIFO (their wake-ups still happen: they are part of an enqueue's cost).
 * Last line: `BENCH_JSON {…}`.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { startFakeResend } from "@/test/support/fake-resend";
import { benchDb, benchEnv, benchExit } from "./bench-support";
import { api, loadAverage, registerThroughApi, startServer, stopServer, treeCpuMs, uploadCsv } from "./server-support";

const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "10" },
    connections: { type: "string", default: "24" },
    port: { type: "string", default: "3970" },
    rounds: { type: "string", default: "2" },
  },
});
const SECONDS = Number(args.seconds);
const CONNECTIONS = Number(args.connections);
const PORT = Number(args.port);
const BASE = `http://127.0.0.1:${PORT}`;

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
async function load(method: string, p: string, token: string, expect: number, seconds: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const until = performance.now() + seconds * 1000;
  let ok = 0;
  let other = 0;
  const one = () =>
    new Promise<number>((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port: PORT, path: p, method, agent, headers: { authorization: `Bearer ${token}`, "content-length": "0" } }, (res) => {
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

async function main() {
  benchEnv();
  const resend = await startFakeResend();
  const front = await gate(resend.url);
  const onPostgres = Boolean(process.env.DATABASE_URL);
  if (onPostgres) await benchDb();
  const tree = mkdtempSync(path.join(os.tmpdir(), "flowmail-enqueue-cost-"));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "flowmail-enqueue-cost-data-"));
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  let ok = false;
  try {
    execFileSync("git", ["worktree", "add", "--detach", tree, "HEAD"], { stdio: "ignore" });
    // Hard links (same filesystem, no copy of the bytes): Turbopack refuses a node_modules symlinked from outside the tree.
    execFileSync("cp", ["-al", path.resolve("node_modules"), path.join(tree, "node_modules")]);
    mkdirSync(path.join(tree, "app/api/zz-bench-empty"), { recursive: true });
    writeFileSync(
      path.join(tree, "app/api/zz-bench-empty/route.ts"),
      "// Built only by bench/enqueue-cost.ts in a temporary worktree: the framework's own cost of a POST.\n" +
        "export async function POST(): Promise<Response> {\n  return Response.json({ ok: true }, { status: 202 });\n}\n",
    );
    const env = { ...process.env, NEXT_DIST_DIR: ".next", AUTH_SECRET: process.env.AUTH_SECRET ?? "bench-secret-bench-secret-bench-secret-0123" };
    console.log(`building ${tree} (the current commit + an empty POST route)…`);
    execFileSync(process.execPath, ["node_modules/next/dist/bin/next", "build"], { cwd: tree, env, stdio: "ignore" });
    server = await startServer(PORT, dataDir, front, { NEXT_DIST_DIR: ".next" }, tree);

    const token = await registerThroughApi(BASE, resend, "cost");
    const uploadId = await uploadCsv(BASE, token, "email\nheld@example.com\n");
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
    const workflowId = (await api(BASE, "POST", "/api/workflows", { name: "enqueue cost", graph }, token)).id as string;
    front.state.hold = true;
    const first = (await api(BASE, "POST", `/api/workflows/${workflowId}/run`, undefined, token)).runId as string;
    for (let i = 0; i < 100; i++) {
      const run = await api(BASE, "GET", `/api/workflows/runs/${first}`, undefined, token);
      if (run.status === "RUNNING") break;
      await new Promise((r) => setTimeout(r, 100));
    }

    const routes = { enqueue: { method: "POST", path: `/api/workflows/${workflowId}/run` }, empty: { method: "POST", path: "/api/zz-bench-empty" } };
    const totals = { enqueue: { ms: 0, n: 0, other: 0 }, empty: { ms: 0, n: 0, other: 0 } };
    for (const name of ["enqueue", "empty"] as const) await load(routes[name].method, routes[name].path, token, 202, 2); // warm-up
    const load0 = loadAverage();
    for (let round = 0; round < Number(args.rounds); round++) {
      for (const name of ["enqueue", "empty"] as const) {
        const cpu0 = treeCpuMs(server.pid!);
        const { ok: n, other } = await load(routes[name].method, routes[name].path, token, 202, SECONDS);
        totals[name].ms += treeCpuMs(server.pid!) - cpu0;
        totals[name].n += n;
        totals[name].other += other;
        console.log(`  round ${round + 1} ${name.padEnd(7)} ${n} × 202 in ${SECONDS}s (${(n / SECONDS).toFixed(0)}/s), ${other} other answers, ${(((treeCpuMs(server.pid!) - cpu0) / n) || 0).toFixed(3)} ms CPU/request`);
      }
    }
    const still = await api(BASE, "GET", `/api/workflows/runs/${first}`, undefined, token);
    const perRequest = (t: { ms: number; n: number }) => t.ms / t.n;
    const ratio = perRequest(totals.enqueue) / perRequest(totals.empty);
    const driver = onPostgres ? "postgres" : "pglite";
    console.log(
      `enqueue-cost: driver=${driver} enqueue=${perRequest(totals.enqueue).toFixed(3)} ms CPU/request (${totals.enqueue.n} requests) ` +
        `empty POST route=${perRequest(totals.empty).toFixed(3)} ms CPU/request (${totals.empty.n}) ratio=${ratio.toFixed(2)} (target ≤ 1.15) ` +
        `held run still ${still.status} load=${load0} → ${loadAverage()}`,
    );
    console.log(`BENCH_JSON ${JSON.stringify({ bench: "enqueue-cost", driver, enqueueCpuMs: perRequest(totals.enqueue), emptyCpuMs: perRequest(totals.empty), ratio, load: loadAverage() })}`);
    ok = totals.enqueue.other === 0 && totals.empty.other === 0 && still.status === "RUNNING";
  } finally {
    if (server) await stopServer(server);
    await front.close();
    await resend.close();
    try {
      execFileSync("git", ["worktree", "remove", "--force", tree], { stdio: "ignore" });
    } catch {
      rmSync(tree, { recursive: true, force: true });
      execFileSync("git", ["worktree", "prune"], { stdio: "ignore" });
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
  await benchExit(ok ? 0 : 1);
}

main().catch(async (error: unknown) => {
  console.error(error);
  await benchExit(1);
});
