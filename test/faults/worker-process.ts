import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export type WorkerProcess = {
  child: ChildProcess;
  /** Resolves when the worker logged "worker started". */
  started: Promise<void>;
  exited: Promise<number | string>;
  /** Its JSON log lines so far (stdout and stderr). */
  lines: Record<string, unknown>[];
};

/**
 * Starts `worker/index.ts` — what `npm run worker` runs — as a real process on the test's PostgreSQL database
 * (TEST_DATABASE_CURRENT_URL). Node runs it with tsx as a loader, so SIGKILL reaches the worker itself.
 */
export function startWorkerProcess(env: Record<string, string> = {}): WorkerProcess {
  const child = spawn(process.execPath, ["--conditions=react-server", "--import", "tsx", "worker/index.ts"], {
    cwd: process.cwd(),
    env: {
      ...process.env,
      VITEST: "",
      VITEST_WORKER_ID: "",
      NODE_ENV: "development",
      DATABASE_URL: process.env.TEST_DATABASE_CURRENT_URL!,
      DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "flowmail-worker-")),
      LOG_FORMAT: "json",
      LOG_LEVEL: "info",
      EMAIL_DAILY_QUOTA: "1000000",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: Record<string, unknown>[] = [];
  const started = new Promise<void>((resolve, reject) => {
    const read = (stream: NodeJS.ReadableStream) => {
      let buffered = "";
      stream.on("data", (chunk: Buffer) => {
        buffered += chunk.toString();
        let newline: number;
        while ((newline = buffered.indexOf("\n")) >= 0) {
          const line = buffered.slice(0, newline);
          buffered = buffered.slice(newline + 1);
          try {
            const parsed = JSON.parse(line) as Record<string, unknown>;
            lines.push(parsed);
            if (parsed.msg === "worker started") resolve();
          } catch {
            lines.push({ unparsed: line });
          }
        }
      });
    };
    read(child.stdout!);
    read(child.stderr!);
    child.on("exit", (code, signal) => reject(new Error(`worker exited before it started: ${code ?? signal}: ${JSON.stringify(lines.slice(-3))}`)));
  });
  started.catch(() => {});
  const exited = new Promise<number | string>((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
  return { child, started, exited, lines };
}
