import "server-only";
import { sql } from "drizzle-orm";
import { execRows, type Db } from "@/db/client";
import type { StopReason } from "../core/run-stop";
import { runMemory } from "./run-memory";

let handingBack = false;

/**
 * SIGTERM/SIGINT (instrumentation.ts → the embedded executor's shutdown): every run this process executes stops at
 * its next step boundary and is handed back (released) instead of finishing here.
 */
export function beginHandBack(): void {
  handingBack = true;
}

/** Re-read at most this often per run: one tiny query per batch group would be cheap, but OUTPUT batches can be many. */
const CHECK_EVERY_MS = 500;

/**
 * Whether the run must stop at this boundary. A cancel (POST …/cancel sets cancel_requested_at) is seen within
 * CHECK_EVERY_MS plus one batch; it wins over a hand-back, so a cancelled run is finished as cancelled. The last answer
 * per run is the process's (RunMemory), so a new store (an Inngest step) does not ask again.
 */
export async function stopReason(db: Db, runId: string, options: { fresh?: boolean } = {}): Promise<StopReason | null> {
  const memory = runMemory();
  const now = Date.now();
  const last = memory.stopChecks.get(runId);
  let cancel: boolean;
  if (!options.fresh && !handingBack && last && now - last.at < CHECK_EVERY_MS) {
    cancel = last.cancel;
  } else {
    const [row] = await execRows<{ cancel: boolean }>(db, sql`select cancel_requested_at is not null as cancel from runs where id = ${runId}`);
    cancel = row?.cancel === true;
    memory.noteStopCheck(runId, cancel, now);
  }
  if (cancel) return "cancel";
  return handingBack ? "handback" : null;
}

/**
 * Hands a RUNNING run back: no executor, no heartbeat, so any process's next sweep (this instance's successor at its
 * start, or another instance within one sweep interval) takes it over at once. Its finished nodes stay finished.
 */
export async function releaseRun(db: Db, runId: string): Promise<void> {
  runMemory().stopChecks.delete(runId);
  await db.execute(sql`update runs set heartbeat_at = null, executor_key = null where id = ${runId} and status = 'RUNNING'`);
}
