// What the multi-process recovery files share: a fake Resend behind a gate, the server processes sending through it,
// a run's row as the processes leave it, and the load average printed beside their figures.
import { sql } from "drizzle-orm";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll } from "vitest";
import { execRows, getDb } from "@/db/client";
import { startFakeResend, type FakeResend } from "@/test/support/fake-resend";
import { startGate, type Gate } from "./gate";
import { startServerProcess, type ServerProcess } from "./server-process";

export type ServerFixture = {
  readonly resend: FakeResend;
  readonly gate: Gate;
  /** Starts a server process (test/faults/server-worker.ts) sending through the gate; ended after the file's tests. */
  start(): ServerProcess;
};

/** Call at a test file's top level: the fake provider and gate open before its tests, every process is killed after. */
export function serverProcessFixture(env: Record<string, string>): ServerFixture {
  let resend: FakeResend | undefined;
  let gate: Gate | undefined;
  const processes: ServerProcess[] = [];
  beforeAll(async () => {
    resend = await startFakeResend();
    gate = await startGate(resend.url);
  });
  afterAll(async () => {
    for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
    await gate?.close();
    await resend?.close();
  });
  return {
    get resend() {
      if (!resend) throw new Error("the fake Resend starts in beforeAll");
      return resend;
    },
    get gate() {
      if (!gate) throw new Error("the gate starts in beforeAll");
      return gate;
    },
    start() {
      const p = startServerProcess(this.gate.url, env);
      processes.push(p);
      return p;
    },
  };
}

/** The run's status, the executor holding it and its heartbeat, as the server processes wrote them. */
export async function runRow(runId: string) {
  const [row] = await execRows<{ status: string; executor_key: number | null; heartbeat_at: string | null }>(
    await getDb(),
    sql`select status, executor_key, heartbeat_at::text from runs where id = ${runId}`,
  );
  return row;
}

export const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
