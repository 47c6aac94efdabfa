// Enqueue throughput and latency of POST /api/workflows/:workflowId/run over real HTTP, from its own process, against
// a running server (production build: `next start`). Keep-alive connections (node:http Agent), `--concurrency`
// requests in flight for `--seconds` after a 1 s warm-up. Every non-202 answer counts as an error.
//
// Usage:
//   npx tsx bench/enqueue-http.ts --url http://localhost:3400 --token <accessToken> --workflow <workflowId>
//   npx tsx --conditions=react-server bench/enqueue-http.ts --url http://localhost:3400 --setup
//     (--setup: inserts a verified account and a one-node workflow into DATABASE_URL — the server's database — and
//      signs a token with AUTH_SECRET, which must be the server's. Registration through the API needs an OTP.)
//   npx tsx bench/enqueue-http.ts --url http://localhost:3400 --setup-api
//     (--setup-api: the same through the server's API — register, the code from the local mailbox, verify, create the
//      workflow; for a server on its embedded PGlite database, in mailbox mode)
//   --setup-only (with --setup or --setup-api): print {"token","workflowId"} and exit, for an external load generator
//   npx tsx bench/enqueue-http.ts --url http://localhost:3400 --baseline
//     (--baseline: the same load on GET /api/health, a route with one `select 1`: the ceiling of this server and machine
//      for a request that costs one statement, to read the enqueue figure against.)
//   options: --seconds 10 --concurrency 32 --server-pid <pid of next-server> --rate <requests/s> --warmup 1 (seconds)
//     (--rate: open loop at that rate, latency from each request's scheduled start; --concurrency caps the in-flight
//      requests. Without it: closed loop, --concurrency requests back to back.)
//     (--server-pid adds the server's CPU time per request over the measured window, read from /proc: a figure that
//      depends far less on what else the machine runs than the rate does; it includes the executor's work.)
// The server should be started with RUN_RATE_LIMIT_PER_MINUTE raised (e.g. 100000000): the limit is per account.
import { readFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: {
    url: { type: "string", default: "http://localhost:3400" },
    token: { type: "string" },
    workflow: { type: "string" },
    setup: { type: "boolean", default: false },
    "setup-only": { type: "boolean", default: false },
    "setup-api": { type: "boolean", default: false },
    baseline: { type: "boolean", default: false },
    seconds: { type: "string", default: "10" },
    concurrency: { type: "string", default: "32" },
    "server-pid": { type: "string" },
    rate: { type: "string" },
    warmup: { type: "string", default: "1" },
  },
});

async function setup(): Promise<{ token: string; workflowId: string }> {
  process.env.LOG_LEVEL ??= "error";
  const { closeDb, getDb } = await import("@/db/client");
  const { accounts, workflows } = await import("@/db/schema");
  const { signAccessToken } = await import("@/lib/auth/tokens");
  const { newId } = await import("@/lib/ids");
  const db = await getDb();
  const accountId = newId("usr");
  await db.insert(accounts).values({
    id: accountId,
    email: `bench-${accountId.slice(-8).toLowerCase()}@example.com`,
    fullName: "Bench",
    passwordHash: "x",
    emailVerifiedAt: new Date(Date.now() - 60_000),
  });
  // One TRIGGER node: the executor still claims and finishes every run, at the smallest cost per run.
  const workflowId = newId("wf");
  const graph = { nodes: [{ id: "t", type: "TRIGGER", position: { x: 0, y: 0 }, data: {} }], edges: [] };
  await db.insert(workflows).values({ id: workflowId, accountId, name: "bench enqueue-http", graph, version: 1 });
  const token = await signAccessToken(accountId);
  await closeDb();
  return { token, workflowId };
}

/**
 * The same through the server's own API, as a newcomer would (README quick start): register, read the code in the
 * local mailbox, verify, create the one-node workflow. Needs no database access: the way to bench a server on its
 * embedded database (PGlite, which the server process holds), in mailbox mode (no RESEND_API_KEY).
 */
async function setupThroughApi(base: URL): Promise<{ token: string; workflowId: string }> {
  const email = `bench-${Date.now().toString(36)}@example.com`;
  const post = async (path: string, body: unknown, token?: string) => {
    const res = await fetch(new URL(path, base), {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    if (!res.ok) fail(`POST ${path} answered ${res.status}: ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  await post("/api/auth/register", { email, password: "bench password 123", fullName: "Bench" });
  const mailbox = await (await fetch(new URL(`/api/dev/mailbox?to=${encodeURIComponent(email)}`, base))).text();
  const otp = /code: (\d{6})/.exec(mailbox)?.[1] ?? fail("no code in the local mailbox (is RESEND_API_KEY set?)");
  const { accessToken } = await post("/api/auth/verify-email", { email, otp });
  // The API accepts only complete workflows (an OUTPUT node): a one-row upload whose row the FILTER drops, so a run
  // reads one row and sends nothing.
  const form = new FormData();
  form.append("file", new Blob(["email\nnobody@example.com\n"], { type: "text/csv" }), "bench.csv");
  const upload = await fetch(new URL("/api/uploads", base), { method: "POST", headers: { authorization: `Bearer ${accessToken}` }, body: form });
  if (!upload.ok) fail(`POST /api/uploads answered ${upload.status}: ${await upload.text()}`);
  const { uploadId } = (await upload.json()) as { uploadId: string };
  const at = (x: number) => ({ x, y: 0 });
  const graph = {
    nodes: [
      { id: "t", type: "TRIGGER", position: at(0), data: {} },
      { id: "src", type: "DATA_SOURCE", position: at(200), data: { uploadId } },
      { id: "none", type: "FILTER", position: at(400), data: { source: "{{src.rows}}", expr: "false" } },
      { id: "mail", type: "OUTPUT", position: at(600), data: { forEach: "{{none.items}}", to: "{{item.email}}", subject: "s", body: "b" } },
    ],
    edges: [
      { source: "t", target: "src" },
      { source: "src", target: "none" },
      { source: "none", target: "mail" },
    ],
  };
  const workflow = await post("/api/workflows", { name: "bench enqueue-http", graph }, accessToken as string);
  return { token: accessToken as string, workflowId: workflow.id as string };
}

/** utime + stime of a process, in ms (Linux /proc; clock ticks are 100/s). */
function cpuMs(pid: string | undefined): number {
  if (!pid) return NaN;
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function send(agent: http.Agent, url: URL, path: string, token: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      token
        ? { host: url.hostname, port: url.port, path, method: "POST", agent, headers: { authorization: `Bearer ${token}`, "content-length": "0" } }
        : { host: url.hostname, port: url.port, path, method: "GET", agent },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });
}

async function main() {
  if (args["setup-only"]) {
    // For an external load generator (wrk): prints the token and workflow id as JSON.
    console.log(JSON.stringify(args["setup-api"] ? await setupThroughApi(new URL(args.url!)) : await setup()));
    return;
  }
  const { token, workflowId } = args.baseline
    ? { token: undefined, workflowId: "" }
    : args["setup-api"]
      ? await setupThroughApi(new URL(args.url!))
      : args.setup
        ? await setup()
      : { token: args.token ?? fail("--token or --setup"), workflowId: args.workflow ?? fail("--workflow or --setup") };
  const expected = args.baseline ? 200 : 202;
  const url = new URL(args.url!);
  const seconds = Number(args.seconds);
  const concurrency = Number(args.concurrency);
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const path = args.baseline ? "/api/health" : `/api/workflows/${workflowId}/run`;
  const first = await send(agent, url, path, token);
  if (first !== expected) fail(`the first request answered ${first}`);

  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  let errors = 0;
  let measuring = false;
  const warmupEnd = performance.now() + Number(args.warmup) * 1000;
  const end = warmupEnd + seconds * 1000;
  let measureStart = 0;
  let serverCpuStart = NaN;
  const worker = async () => {
    for (;;) {
      const t0 = performance.now();
      if (t0 >= end) return;
      if (!measuring && t0 >= warmupEnd) {
        measuring = true;
        measureStart = t0;
        serverCpuStart = cpuMs(args["server-pid"]);
      }
      let status = 0;
      try {
        status = await send(agent, url, path, token);
      } catch {
        status = -1;
      }
      const t1 = performance.now();
      if (t0 < warmupEnd) continue;
      latencies.push(t1 - t0);
      if (status !== expected) {
        errors++;
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }
  };
  // Open loop (--rate): requests start on a fixed schedule whatever the answers do, and each latency is counted from
  // its scheduled start (no coordinated omission): the figure for "sustains R/s with p99 ≤ X". At most
  // --concurrency requests are in flight; a request that cannot start on time because of that cap waits for a slot.
  const openLoop = async (rate: number) => {
    const interval = 1000 / rate;
    let next = performance.now();
    let inFlight = 0;
    const waiting: (() => void)[] = [];
    const pending = new Set<Promise<void>>();
    const fire = async (scheduled: number) => {
      if (inFlight >= concurrency) await new Promise<void>((resolve) => waiting.push(resolve));
      inFlight++;
      let status = 0;
      try {
        status = await send(agent, url, path, token);
      } catch {
        status = -1;
      }
      inFlight--;
      waiting.shift()?.();
      const done = performance.now();
      if (scheduled < warmupEnd) return;
      latencies.push(done - scheduled);
      if (status !== expected) {
        errors++;
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    };
    while (performance.now() < end) {
      const now = performance.now();
      if (!measuring && now >= warmupEnd) {
        measuring = true;
        measureStart = now;
        serverCpuStart = cpuMs(args["server-pid"]);
      }
      for (; next <= now && next < end; next += interval) {
        const p = fire(next);
        pending.add(p);
        void p.finally(() => pending.delete(p));
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await Promise.all(pending);
  };
  if (args.rate) await openLoop(Number(args.rate));
  else await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = args.rate ? seconds : (performance.now() - measureStart) / 1000;
  const serverCpu = (cpuMs(args["server-pid"]) - serverCpuStart) / latencies.length;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => (latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN).toFixed(1);
  const detail = errors ? ` statuses=${JSON.stringify(Object.fromEntries(statuses))}` : "";
  console.log(
    `${args.baseline ? "health-baseline" : "enqueue-http"} rps=${Math.round(latencies.length / elapsed)} p50=${pct(0.5)}ms p99=${pct(0.99)}ms max=${pct(1)}ms ` +
      `errors=${errors}${Number.isNaN(serverCpu) ? "" : ` server-cpu=${serverCpu.toFixed(2)}ms/req`} requests=${latencies.length} ${args.rate ? `rate=${args.rate}/s max-in-flight` : "concurrency"}=${concurrency} seconds=${seconds} ` +
      `load=${os.loadavg().map((l) => l.toFixed(2)).join(",")}${detail} (targets ≥1000/s, p99 ≤50ms)`,
  );
}

function fail(message: string): never {
  console.error(`enqueue-http: ${message}`);
  process.exit(1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
