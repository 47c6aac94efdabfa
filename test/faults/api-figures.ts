// What the figure scripts of test/faults share: the API server process (api-server-worker.ts), a health watcher
// in this process (so a frozen server shows), and small API calls.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { mb } from "@/bench/bench-support";
import { treeRss } from "@/bench/server-support";

const HEALTH_EVERY_MS = 50;

export type Run = { status: string; error?: { message?: string } | string | null; startedAt?: string | null; completedAt?: string | null; nodes?: unknown };

export function startApiServer(): Promise<{ url: string; pid: number; kill: () => void }> {
  const child = spawn(process.execPath, ["--conditions=react-server", "--import", "tsx", "test/faults/api-server-worker.ts"], {
    env: { ...process.env, DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "flowmail-freeze-")), LOG_LEVEL: "error" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let buffered = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      const match = /listening (\S+)/.exec(buffered);
      if (match) resolve({ url: match[1], pid: child.pid!, kill: () => child.kill("SIGKILL") });
    });
    child.on("exit", (code) => reject(new Error(`server exited: ${code}`)));
  });
}

/** Health every HEALTH_EVERY_MS until stopped; the server's RSS sampled alongside. */
export function watch(base: string, pid: number) {
  const samples: number[] = [];
  const slow: { atMs: number; ms: number }[] = [];
  const t0 = performance.now();
  let peakRss = treeRss(pid);
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const res = await fetch(`${base}/api/health`);
      await res.arrayBuffer();
      samples.push(performance.now() - started);
      if (performance.now() - started > 100) slow.push({ atMs: Math.round(started - t0), ms: Math.round(performance.now() - started) });
      peakRss = Math.max(peakRss, treeRss(pid));
      await new Promise((r) => setTimeout(r, Math.max(0, HEALTH_EVERY_MS - (performance.now() - started))));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      const sorted = [...samples].sort((a, b) => a - b);
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
      return { n: sorted.length, p50: Math.round(at(0.5)), p99: Math.round(at(0.99)), max: Math.round(sorted[sorted.length - 1]), peakRssMb: mb(peakRss), slow };
    },
  };
}

export async function call(base: string, token: string, method: string, p: string, json?: unknown): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (json !== undefined) headers["content-type"] = "application/json";
  else if (method === "POST") headers["content-length"] = "0";
  const res = await fetch(`${base}${p}`, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

export async function waitFinal(base: string, token: string, runId: string, limitMs: number): Promise<Run> {
  const until = Date.now() + limitMs;
  for (;;) {
    const { body } = await call(base, token, "GET", `/api/workflows/runs/${runId}`);
    if (["SUCCESS", "FAILED", "CANCELLED"].includes(body.status)) return body as Run;
    if (Date.now() > until) throw new Error(`run ${runId} still ${body.status} after ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

