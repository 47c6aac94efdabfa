import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export type ServerProcess = {
  child: ChildProcess;
  /** When the process said it was ready (epoch ms) and its executor lock key. */
  ready: Promise<{ at: number; key: number | null }>;
  exited: Promise<number | string>;
};

/**
 * Starts test/faults/server-worker.ts (the background work of a Flowmail server) as a real process on the test's
 * PostgreSQL database, sending through `resendUrl`. Node itself runs it with tsx as a loader, so SIGKILL reaches it.
 */
export function startServerProcess(resendUrl: string, env: Record<string, string> = {}): ServerProcess {
  const child = spawn(process.execPath, ["--conditions=react-server", "--import", "tsx", "test/faults/server-worker.ts"], {
    cwd: process.cwd(),
    env: {
      ...process.env,
      DATABASE_URL: process.env.TEST_DATABASE_CURRENT_URL!,
      DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "flowmail-server-")),
      LOG_LEVEL: "error",
      RESEND_API_KEY: "re_test",
      RESEND_BASE_URL: resendUrl,
      EMAIL_DAILY_QUOTA: "1000000",
      ...env,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const ready = new Promise<{ at: number; key: number | null }>((resolve, reject) => {
    let buffered = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      const match = /READY (\d+) (\S+)/.exec(buffered);
      if (match) resolve({ at: Number(match[1]), key: match[2] === "none" ? null : Number(match[2]) });
    });
    child.on("exit", (code, signal) => reject(new Error(`server process exited before ready: ${code ?? signal}`)));
  });
  ready.catch(() => {});
  const exited = new Promise<number | string>((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
  return { child, ready, exited };
}
