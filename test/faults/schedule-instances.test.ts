/**
 * Fault: two app instances (test/faults/schedule-worker.ts: the embedded executor, whose sweep enqueues due schedule
 * slots) on one PostgreSQL, a workflow scheduled every minute. Instance A is killed with SIGKILL exactly at a slot and
 * restarted a slot later; then both die and stay down across two slots, and one comes back. Every slot while at least
 * one instance was up has exactly one run; the slots of the outage are skipped (not run late in a burst).
 * The instances share a fast clock (SPEED× real time, the same formula in every process), so the minutes pass in
 * seconds while the processes really sweep. PostgreSQL only: PGlite admits one process.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { sql } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { execRows, getDb } from "@/db/client";
import * as workflowRoute from "@/app/api/workflows/[workflowId]/route";
import { setClock } from "@/lib/clock";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";
import { emailEveryRowWorkflow } from "@/test/runs/helpers";
import { waitFor } from "./gate";

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
const SPEED = 15; // one schedule minute = 4 s
const MINUTE = 60_000;
const T0 = Date.now();
const virtualNow = () => T0 + (Date.now() - T0) * SPEED;
/** Real milliseconds until the shared clock reads `virtualMs`. */
const realDelayUntil = (virtualMs: number) => Math.max(0, (virtualMs - virtualNow()) / SPEED);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Instance = { name: string; child: ChildProcess; exited: Promise<number | string>; ready: Promise<void>; go: () => Promise<void> };
const instances: Instance[] = [];

/** Spawns an instance and resolves once it is loaded; `standby` ones start sweeping only when `go()` is called. */
async function spawnInstance(name: string, standby = false): Promise<Instance> {
  const child = spawn(process.execPath, ["--conditions=react-server", "--import", "tsx", "test/faults/schedule-worker.ts"], {
    cwd: process.cwd(),
    env: {
      ...process.env,
      DATABASE_URL: process.env.TEST_DATABASE_CURRENT_URL!,
      CLOCK_T0: String(T0),
      CLOCK_SPEED: String(SPEED),
      WAIT_FOR_GO: standby ? "1" : "0",
      LOG_LEVEL: "error",
    },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise<number | string>((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal ?? "unknown")));
  const line = (word: string) =>
    new Promise<void>((resolve, reject) => {
      child.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes(word) && resolve());
      void exited.then((code) => reject(new Error(`instance ${name} exited before "${word}": ${code}`)));
    });
  const loaded = line("loaded");
  const ready = line("ready");
  ready.catch(() => {});
  await loaded;
  const instance: Instance = {
    name,
    child,
    exited,
    ready,
    go: async () => {
      child.stdin!.write("go\n");
      await ready;
    },
  };
  instances.push(instance);
  return instance;
}

async function kill(instance: Instance): Promise<void> {
  instance.child.kill("SIGKILL");
  expect(await instance.exited).toBe("SIGKILL");
}

afterAll(async () => {
  setClock();
  for (const i of instances) if (i.child.exitCode === null && i.child.signalCode === null) i.child.kill("SIGKILL");
});

type SlotRow = { slot_at: string | Date; runs: number; created_at: string | Date };

async function slotRows(workflowId: string): Promise<SlotRow[]> {
  return execRows<SlotRow>(
    await getDb(),
    sql`select s.slot_at, s.created_at, (select count(*)::int from runs r where r.id = s.run_id and r.trigger = 'schedule') as runs
        from schedule_slots s where s.workflow_id = ${workflowId} order by s.slot_at`,
  );
}

async function hasSlot(workflowId: string, slot: number): Promise<boolean> {
  return (await slotRows(workflowId)).some((r) => new Date(r.slot_at).getTime() === slot);
}

describe.runIf(onPostgres)("two instances on one PostgreSQL, a schedule due every minute, kill -9 across a slot", () => {
  it("enqueues exactly one run per slot while an instance is up, and skips the slots of a full outage", async () => {
    setClock(virtualNow); // the PATCH below computes the first slot on the shared clock
    // A and B sweep from the start; A2 (A restarted) and C (an instance back after an outage) wait loaded.
    const [a, b, a2, c] = await Promise.all([spawnInstance("A"), spawnInstance("B"), spawnInstance("A2", true), spawnInstance("C", true)]);
    await Promise.all([a.ready, b.ready]);
    // The account's token is signed on the shared clock now (process starts may have taken minutes of it).
    const { id, token } = await createTestAccount();
    const { workflowId } = await emailEveryRowWorkflow(id, 1, "sched");
    const patched = await call(workflowRoute.PATCH, { method: "PATCH", path: `/api/workflows/${workflowId}`, params: { workflowId }, json: { schedule: { cron: "* * * * *" } }, token });
    expect(patched.status, patched.text).toBe(200);
    const s1 = Date.parse(patched.body.nextRunAt);
    const slot = (k: number) => s1 + (k - 1) * MINUTE;
    const up: Record<number, string> = {};

    // Slot 1: both up.
    up[1] = "A+B";
    await waitFor("slot 1", () => hasSlot(workflowId, slot(1)), 30_000);
    // Slot 2: A is killed exactly at the slot (it may or may not have claimed it); B must carry it.
    await sleep(realDelayUntil(slot(2)));
    await kill(a);
    up[2] = "B (A killed -9 at the slot)";
    await waitFor("slot 2", () => hasSlot(workflowId, slot(2)), 30_000);
    // A is restarted 30 s (schedule time) after slot 2; slot 3 with both up again.
    await sleep(realDelayUntil(slot(2) + 30_000));
    await a2.go();
    up[3] = "A+B";
    await waitFor("slot 3", () => hasSlot(workflowId, slot(3)), 30_000);
    // Full outage across slots 4 and 5; an instance is back 30 s after slot 6.
    await sleep(realDelayUntil(slot(3) + 20_000));
    await kill(a2);
    await kill(b);
    up[4] = "none";
    up[5] = "none";
    await sleep(realDelayUntil(slot(6) + 30_000));
    await c.go();
    up[6] = "C (started 30 s after the slot)";
    up[7] = "C";
    await waitFor("slot 7", () => hasSlot(workflowId, slot(7)), 30_000);
    // Let the survivor sweep well into the minute after slot 7: a duplicate would show up by now.
    await sleep(realDelayUntil(slot(7) + 45_000));
    const lastUp = virtualNow(); // C is up until here, at least
    await kill(c);
    const killedAt = virtualNow();
    // On a loaded machine C can take a schedule minute or more to reach slot 7 (one real second is 15 s of it), so
    // slot 8 and later may be due while C is still up: each such slot is then run once, like slot 7. A slot that
    // fell due during the kill itself may or may not have been taken.
    const lastSlot = Math.max(7, Math.floor((lastUp - s1) / MINUTE) + 1);
    const maybeSlot = Math.floor((killedAt - s1) / MINUTE) + 1;
    for (let k = 8; k <= lastSlot; k++) up[k] = "C";

    const rows = await slotRows(workflowId);
    const figures = Array.from({ length: lastSlot }, (_, i) => i + 1).map((k) => {
      const row = rows.find((r) => new Date(r.slot_at).getTime() === slot(k));
      // created_at is the database's real time; convert its distance from the slot's real instant to schedule time.
      const slotReal = T0 + (slot(k) - T0) / SPEED;
      const lag = row ? Math.round((new Date(row.created_at).getTime() - slotReal) * SPEED) / 1000 : null;
      return { slot: k, at: new Date(slot(k)).toISOString().slice(11, 19), instancesUp: up[k], runs: row?.runs ?? 0, lagScheduleSeconds: lag };
    });
    const load = existsSync("/proc/loadavg") ? readFileSync("/proc/loadavg", "utf8").trim() : "n/a";
    console.log(`schedule-instances (speed ${SPEED}×, sweep every ${(250 * SPEED) / 1000} s of schedule time, loadavg ${load}):`);
    console.table(figures);

    expect(figures.map((f) => f.runs)).toEqual([1, 1, 1, 0, 0, ...Array.from({ length: lastSlot - 5 }, () => 1)]);
    // No slot outside these either (slot maybeSlot, due during the kill, may or may not have been run).
    const extra = rows.filter((r) => !figures.some((f) => f.runs === 1 && slot(f.slot) === new Date(r.slot_at).getTime()));
    expect(extra.map((r) => new Date(r.slot_at).getTime())).toEqual(extra.length && maybeSlot > lastSlot ? [slot(maybeSlot)] : []);
    const [total] = await execRows<{ n: number }>(await getDb(), sql`select count(*)::int as n from runs where workflow_id = ${workflowId} and trigger = 'schedule'`);
    expect(total.n).toBe(rows.length);
    expect(rows.every((r) => r.runs === 1)).toBe(true);
  });
});
