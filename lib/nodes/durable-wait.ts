import "server-only";
import { AsyncLocalStorage } from "node:async_hooks";

/**
 * Durable waits. A driver whose steps can wait without holding a process (Inngest's `step.sleep`) runs a node's batch
 * step inside `withDurableWaits`: a node that would wait minutes in the process (batch mode polling its provider
 * batch) asks for the wait instead (`requestDurableWait`) and returns; the driver ends the step, sleeps, and runs the
 * step again, which picks up from the node's durable state. Without such a driver the node waits in the process.
 */
type Slot = { waitMs?: number };

const slots = new AsyncLocalStorage<Slot>();

/** Runs `fn` (one node step) letting it ask for a durable wait; answers its value and the wait it asked for, if any. */
export async function withDurableWaits<T>(fn: () => Promise<T>): Promise<{ value: T; waitMs?: number }> {
  const slot: Slot = {};
  const value = await slots.run(slot, fn);
  return { value, waitMs: slot.waitMs };
}

/**
 * Whether the step may end here and be run again after `ms`: true (the wait is asked for; the caller returns at
 * once, its state kept outside the process) under a driver with durable waits, false otherwise (the caller waits).
 */
export function requestDurableWait(ms: number): boolean {
  const slot = slots.getStore();
  if (!slot) return false;
  slot.waitMs = ms;
  return true;
}
