// Shared by the benchmarks that drive a production server (`next start` of a build in NEXT_DIST_DIR) over HTTP:
// start it against a local fake Resend, register through the API, upload, read the process tree's CPU and RSS.
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { FakeResend } from "@/test/support/fake-resend";

export const loadAverage = () => os.loadavg().map((l) => l.toFixed(2)).join(" ");

/** utime + stime of a process and its descendants, in ms (clock ticks are 100/s). */
export function treeCpuMs(pid: number): number {
  let total = 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    total += (Number(fields[11]) + Number(fields[12])) * 10;
    for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean)) total += treeCpuMs(Number(child));
  } catch {
    // the process ended
  }
  return total;
}

/** CPU (ms) of every `postgres` process on this machine (a local server; other clients' work is in it too). */
export function postgresCpuMs(): number {
  let total = 0;
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (!stat.includes("(postgres)")) continue;
      const fields = stat.split(") ")[1].split(" ");
      total += (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      // ended meanwhile
    }
  }
  return total;
}

/** utime + stime of one thread (task) of a process, in ms; 0 once it has ended. */
export function taskCpuMs(pid: number, tid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/**
 * utime + stime of a process's main thread alone, in ms: the thread that runs JavaScript's event loop (Next.js, the
 * route handlers, the database driver's JavaScript). Its thread id is the process id; every other task of the
 * process — V8's GC and compiler helpers, libuv's pool, worker threads such as PGlite's — is left out.
 */
export function mainThreadCpuMs(pid: number): number {
  return taskCpuMs(pid, pid);
}

/**
 * CPU time of a process's threads by thread name (`/proc/<pid>/task/<tid>/comm`: e.g. "node" for the main thread,
 * "V8 DefaultWorke" for V8's helpers, "libuv-worker"; Node's worker threads take their own names), in ms, the main thread under
 * "main". Threads that ended are missing here but still counted by treeCpuMs.
 */
export function threadCpuMs(pid: number): Record<string, number> {
  const byName: Record<string, number> = {};
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return byName;
  }
  for (const tid of tids) {
    let name = "main";
    if (Number(tid) !== pid) {
      try {
        name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
      } catch {
        continue;
      }
    }
    byName[name] = (byName[name] ?? 0) + taskCpuMs(pid, Number(tid));
  }
  return byName;
}

/**
 * The server's PGlite thread (db/pglite-in-worker.ts), to count the embedded database's CPU apart: of the threads other
 * than the main one that carry the process title (`next start` sets it before the worker starts; V8's helpers, started
 * earlier, are "node"), the one that has used the most CPU. libuv's pool threads, started on first use, carry the
 * title too, but run only the odd fs, dns or crypto job. Call it after the warm-up; undefined if there is none.
 */
export function databaseThreadId(pid: number): number | undefined {
  let title: string;
  let tids: string[];
  try {
    title = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  let best: { tid: number; ms: number } | undefined;
  for (const tid of tids.map(Number)) {
    if (tid === pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim() !== title) continue;
    } catch {
      continue; // the thread ended
    }
    const ms = taskCpuMs(pid, tid);
    if (!best || ms > best.ms) best = { tid, ms };
  }
  return best?.tid;
}

/** Resident memory of a process and its descendants, in bytes. */
export function treeRss(pid: number): number {
  let total = 0;
  try {
    total += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
    for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean)) total += treeRss(Number(child));
  } catch {
    // the process ended
  }
  return total;
}

/** Resident memory of one process alone (a helper it started, such as tsx's esbuild service, left out), in bytes. */
export function ownRss(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
  } catch {
    return 0; // the process ended
  }
}

/**
 * The server's peak RSS while a benchmark runs, sampled every `everyMs` from now until `stop()`: of its process tree
 * (`tree`, what the freeze benchmark's target is about) and of the server process alone (`own`).
 */
export function peakRssSampler(pid: number, everyMs = 100) {
  const peak = { tree: treeRss(pid), own: ownRss(pid) };
  const sample = () => {
    peak.tree = Math.max(peak.tree, treeRss(pid));
    peak.own = Math.max(peak.own, ownRss(pid));
  };
  const timer = setInterval(sample, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return { ...peak };
    },
  };
}

/**
 * The Node flags `npm start` gives the server (package.json's start script: `node <flags> node_modules/next/dist/bin/next
 * start`), so a benchmark's server runs as a production one does. Since 2026-11-27 that is a larger young generation
 * (README, "Running in production").
 */
export function startScriptNodeFlags(cwd = process.cwd()): string[] {
  const start = (JSON.parse(readFileSync(path.join(cwd, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts.start;
  if (start === "next start") return []; // a build from before 2026-11-27 (bench/enqueue-cost.ts --baseline)
  const match = /^node ((?:--\S+ ?)*)node_modules\/next\/dist\/bin\/next start$/.exec(start);
  if (!match) throw new Error(`package.json's start script is not \`node <flags> node_modules/next/dist/bin/next start\`: ${start}`);
  return match[1].trim().split(" ").filter(Boolean);
}

/**
 * `next start` on 127.0.0.1:port with DATA_DIR, sending through the fake Resend with pacing and quotas lifted.
 * SERVER_NODE_FLAGS (space-separated) are passed to the server's Node, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
 */
export async function startServer(
  port: number,
  dataDir: string,
  resend: { url: string },
  extraEnv: Record<string, string> = {},
  cwd = process.cwd(),
): Promise<ChildProcess> {
  const base = `http://127.0.0.1:${port}`;
  const flags = [...startScriptNodeFlags(cwd), ...(process.env.SERVER_NODE_FLAGS ? process.env.SERVER_NODE_FLAGS.split(" ") : [])];
  const child = spawn(process.execPath, [...flags, "node_modules/next/dist/bin/next", "start", "-p", String(port), "-H", "127.0.0.1"], {
    cwd,
    env: {
      ...process.env,
      NODE_ENV: "production",
      DATA_DIR: dataDir,
      APP_URL: base,
      LOG_LEVEL: "error",
      RESEND_API_KEY: "re_bench",
      RESEND_BASE_URL: resend.url,
      // The fake has no rate limit: pacing is lifted (test/faults/send-pacing.test.ts measures it).
      EMAIL_RATE_PER_SECOND: "100000",
      EMAIL_DAILY_QUOTA: "100000000",
      RUN_RATE_LIMIT_PER_MINUTE: "100000000",
      AUTH_SECRET: process.env.AUTH_SECRET ?? "bench-secret-bench-secret-bench-secret-0123",
      ...extraEnv,
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  for (let i = 0; i < 600; i++) {
    if (await fetch(`${base}/api/health`).then((r) => r.ok, () => false)) return child;
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill();
  throw new Error("the server did not become healthy");
}

export async function stopServer(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null) return;
  server.kill("SIGTERM");
  await new Promise((r) => server.once("exit", r));
}

/** A JSON (or multipart) call that must succeed; answers the parsed body. */
export async function api(base: string, method: string, p: string, body: unknown, token?: string) {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const init: RequestInit = { method, headers };
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) {
    headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(`${base}${p}`, init);
  if (!res.ok) throw new Error(`${method} ${p} answered ${res.status}: ${await res.text()}`);
  return res.json() as Promise<Record<string, unknown>>;
}

/** Registers a fresh account through the API (the code read from the fake Resend) and answers its access token. */
export async function registerThroughApi(base: string, resend: FakeResend, label: string): Promise<string> {
  const email = `bench-${label}-${Date.now().toString(36)}@example.com`;
  await api(base, "POST", "/api/auth/register", { email, password: `Bench ${label} ${Math.random().toString(36).slice(2)} horse`, fullName: "Bench" });
  const otp = /code: (\d{6})/.exec(resend.emailsTo(email).at(-1)?.subject ?? "")?.[1];
  if (!otp) throw new Error("no code in the fake Resend's emails");
  return (await api(base, "POST", "/api/auth/verify-email", { email, otp })).accessToken as string;
}

/** Uploads a CSV text through `POST /api/uploads`; answers the upload id. */
export async function uploadCsv(base: string, token: string, csv: string): Promise<string> {
  const form = new FormData();
  form.append("file", new Blob([csv], { type: "text/csv" }), "bench.csv");
  return (await api(base, "POST", "/api/uploads", form, token)).uploadId as string;
}
