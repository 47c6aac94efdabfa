/**
 * Resumable upload benchmark (CONTRACT 14): a ~50 MiB CSV (500k rows × 8 columns) sent with tus-js-client to a
 * production server (`next start`, started here) through a local proxy that refuses request bodies over 4.5 MB as
 * Vercel does (test/support/body-limit-proxy.ts).
 *
 *   NEXT_DIST_DIR=.next-tus npx next build            (once)
 *   NEXT_DIST_DIR=.next-tus npx tsx --conditions=react-server --tsconfig tsconfig.json bench/upload-tus.ts [--rows 500000] [--port 3451]
 *     (DATABASE_URL set: a fresh database on that PostgreSQL server; unset: the server's embedded PGlite in a fresh DATA_DIR)
 *
 * Prints, each on one line: the multipart upload of the same file through the proxy (must be the proxy's 413);
 * the tus upload (time, pieces, rowCount, the server's RSS growth: its process tree's peak RSS minus before);
 * the same with the proxy cutting the connection at 50 % (the HEAD offset it resumed from, bytes sent again,
 * rowCount and sizeBytes — equal to the file's size only if no byte was stored twice); and the load average.
 * Targets: ≤ 8 s on PostgreSQL, ≤ 12 s on PGlite, RSS growth ≤ 300 MB.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Upload } from "tus-js-client";
import { startBodyLimitProxy } from "@/test/support/body-limit-proxy";
import { benchDb, benchEnv, benchExit, mb, writeBenchCsv } from "./bench-support";

const { values: args } = parseArgs({
  options: { rows: { type: "string", default: "500000" }, port: { type: "string", default: "3451" } },
});
const ROWS = Number(args.rows);
const PORT = Number(args.port);
const BASE = `http://127.0.0.1:${PORT}`;

/** RSS of a process and all its descendants (next start may fork its server). */
function treeRss(pid: number): number {
  let total = 0;
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    total += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
    for (const task of readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean)) total += treeRss(Number(task));
  } catch {
    // the process ended
  }
  return total;
}

async function startServer(dataDir: string) {
  const child = spawn(process.execPath, ["node_modules/next/dist/bin/next", "start", "-p", String(PORT), "-H", "127.0.0.1"], {
    env: {
      ...process.env,
      NODE_ENV: "production",
      DATA_DIR: dataDir,
      MAILBOX_ENABLED: "true",
      APP_URL: BASE,
      LOG_LEVEL: "error",
      AUTH_SECRET: process.env.AUTH_SECRET ?? "bench-secret-bench-secret-bench-secret-0123",
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  for (let i = 0; i < 600; i++) {
    const healthy = await fetch(`${BASE}/api/health`).then((r) => r.ok, () => false);
    if (healthy) return child;
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill();
  throw new Error("the server did not become healthy");
}

async function register(): Promise<string> {
  const email = `bench-${Date.now().toString(36)}@example.com`;
  const post = async (p: string, body: unknown) => {
    const res = await fetch(`${BASE}${p}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`POST ${p} answered ${res.status}: ${await res.text()}`);
    return res.json() as Promise<Record<string, string>>;
  };
  await post("/api/auth/register", { email, password: `Bench upload ${Math.random().toString(36).slice(2)} horse`, fullName: "Bench" });
  const mailbox = await (await fetch(`${BASE}/api/dev/mailbox?to=${encodeURIComponent(email)}`)).text();
  const otp = /code: (\d{6})/.exec(mailbox)?.[1];
  if (!otp) throw new Error("no code in the local mailbox");
  return (await post("/api/auth/verify-email", { email, otp })).accessToken;
}

type TusRun = { seconds: number; uploadId: string; patches: number; heads: number[]; bytesSent: number };

function tusUpload(endpoint: string, token: string, data: Buffer): Promise<TusRun> {
  const started = performance.now();
  const heads: number[] = [];
  let patches = 0;
  let bytesSent = 0;
  return new Promise((resolve, reject) => {
    const upload = new Upload(data, {
      endpoint: `${endpoint}/api/uploads/tus`,
      chunkSize: 4 * 1024 * 1024,
      retryDelays: [0, 500, 1000, 3000],
      metadata: { filename: "bench.csv", filetype: "text/csv" },
      headers: { Authorization: `Bearer ${token}` },
      onBeforeRequest: (req) => {
        if (req.getMethod() === "PATCH") patches++;
      },
      onAfterResponse: (req, res) => {
        if (req.getMethod() === "HEAD") heads.push(Number(res.getHeader("Upload-Offset")));
      },
      onProgress: (sent) => (bytesSent = Math.max(bytesSent, sent)),
      onSuccess: ({ lastResponse }) =>
        resolve({ seconds: (performance.now() - started) / 1000, uploadId: lastResponse.getHeader("Flowmail-Upload-Id") ?? "", patches, heads, bytesSent }),
      onError: reject,
    });
    upload.start();
  });
}

async function uploadMeta(token: string, uploadId: string) {
  const res = await fetch(`${BASE}/api/uploads/${uploadId}`, { headers: { Authorization: `Bearer ${token}` } });
  return (await res.json()) as { rowCount: number; sizeBytes: number };
}

async function main() {
  benchEnv();
  const scratch = mkdtempSync(path.join(os.tmpdir(), "flowmail-tus-bench-"));
  const file = path.join(scratch, "bench.csv");
  writeBenchCsv(file, ROWS);
  const data = readFileSync(file);
  // PostgreSQL: a fresh, migrated database that the server then uses (PGlite: the server's own, in a fresh DATA_DIR).
  const driver = process.env.DATABASE_URL ? (await benchDb()).driver : "pglite";
  mkdirSync("/tmp/tus-data", { recursive: true });
  const dataDir = mkdtempSync(path.join("/tmp/tus-data", "bench-"));
  const server = await startServer(dataDir);
  try {
    const token = await register();
    const proxy = await startBodyLimitProxy({ target: BASE });
    const form = new FormData();
    form.append("file", new File([new Uint8Array(data)], "bench.csv", { type: "text/csv" }));
    const multipart = await fetch(`${proxy.url}/api/uploads`, { method: "POST", body: form, headers: { Authorization: `Bearer ${token}` } });
    console.log(`multipart ${mb(data.length)}MiB through the proxy: status=${multipart.status} ${(await multipart.text()).includes("FUNCTION_PAYLOAD_TOO_LARGE") ? "(the proxy's 413)" : "(NOT the proxy)"}`);

    const before = treeRss(server.pid!);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, treeRss(server.pid!))), 50);
    const run = await tusUpload(proxy.url, token, data);
    clearInterval(sampler);
    const meta = await uploadMeta(token, run.uploadId);
    console.log(
      `tus ${mb(data.length)}MiB driver=${driver} time=${run.seconds.toFixed(2)}s patches=${run.patches} rows=${meta.rowCount} ` +
        `sizeBytes=${meta.sizeBytes} serverRssGrowth=${mb(peak - before)}MB proxyRefused=${proxy.refused - 1}`,
    );
    await proxy.close();

    const cutting = await startBodyLimitProxy({ target: BASE, cutAfterBytes: Math.floor(data.length / 2) });
    const resumed = await tusUpload(cutting.url, token, data);
    const resumedMeta = await uploadMeta(token, resumed.uploadId);
    const forwarded = [...cutting.forwarded.values()].reduce((a, b) => a + b, 0);
    console.log(
      `tus cut at 50%: cuts=${cutting.cuts} resumedFrom=${resumed.heads.join(",")} time=${resumed.seconds.toFixed(2)}s patches=${resumed.patches} ` +
        `rows=${resumedMeta.rowCount} sizeBytes=${resumedMeta.sizeBytes} (file ${data.length}: ${resumedMeta.sizeBytes === data.length ? "each byte stored once" : "MISMATCH"}) ` +
        `bytesForwarded=${forwarded}`,
    );
    await cutting.close();
    console.log(`load ${readFileSync("/proc/loadavg", "utf8").trim()}`);
    const ok = multipart.status === 413 && meta.rowCount === ROWS && resumedMeta.rowCount === ROWS && resumedMeta.sizeBytes === data.length;
    process.exitCode = ok ? 0 : 1;
  } finally {
    server.kill("SIGTERM");
    await new Promise((r) => server.once("exit", r));
    rmSync(scratch, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
  await benchExit(process.exitCode ?? 0);
}

main().catch(async (error: unknown) => {
  console.error(error);
  await benchExit(1);
});
