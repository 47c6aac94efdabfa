import "server-only";
import v8 from "node:v8";

/**
 * A long run of model calls (an AI node of thousands of items) allocates fast, and V8 then lets the old generation
 * grow to up to four times what survives a full collection before it collects again: at 100,000 items it held
 * ~400 MB, mostly garbage, committed and never given back. While such a node runs in this process, V8's heap
 * growing factor is 1.3 instead (`--heap-growing-percent`): full collections come sooner and the old generation stays
 * near what is alive. Measured (bench/ai-memory.ts, 100,000 items): the same run time and server CPU, a peak
 * ~300 MB lower. Only while such a node runs: for the short-lived requests and runs of a busy server, the same
 * factor cost ~15 % more CPU per tiny run (more full collections of their promoted garbage).
 *
 * The flag is the process's (every thread's heap reads it when it sets its next limit); it goes back to the
 * process's own value (its command line's, else V8's default, 0: the dynamic factor) when the last holder lets go.
 */
export const LEAN_HEAP_GROWING_PERCENT = 30;

/**
 * `minItems`: nodes at least this big hold the lean heap while their calls run; `lingerMs`: the process's value comes
 * back this long after the last holder let go (a node's batches follow one another). Mutable for tests.
 */
export const leanHeapPolicy = { minItems: 1_000, lingerMs: 10_000 };

/**
 * One count per process, kept on globalThis: Next.js may load this module once per route bundle, and a copy of its own
 * would give the process's value back while another copy's node still runs.
 */
const state: { holders: number; restore?: ReturnType<typeof setTimeout> } = ((globalThis as { __flowmailLeanHeap?: typeof state })
  .__flowmailLeanHeap ??= { holders: 0 });

/** The lean factor is set while someone holds it, and until the restore that follows the last release. */
const isLean = () => state.holders > 0 || state.restore !== undefined;

/** Where the flag goes: V8 (tests observe the calls). */
export const leanHeapFlags = { set: (flag: string) => v8.setFlagsFromString(flag) };

function processValue(): string {
  const given = process.execArgv.find((a) => /^--heap[-_]growing[-_]percent=/.test(a));
  return given?.split("=")[1] ?? "0";
}

/** Holds the lean heap until the returned function is called (once; later calls do nothing). */
export function holdLeanHeap(): () => void {
  if (!isLean()) leanHeapFlags.set(`--heap-growing-percent=${LEAN_HEAP_GROWING_PERCENT}`);
  state.holders++;
  clearTimeout(state.restore);
  state.restore = undefined;
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    if (--state.holders > 0) return;
    // Not at once: between two batches of the node, a limit set with the dynamic factor would let the old generation
    // grow fourfold again.
    state.restore = setTimeout(() => {
      state.restore = undefined;
      leanHeapFlags.set(`--heap-growing-percent=${processValue()}`);
    }, leanHeapPolicy.lingerMs);
    state.restore.unref?.();
  };
}

/** Whether the lean factor is set now, and how many hold it (tests). */
export function leanHeapState(): { lean: boolean; holders: number } {
  return { lean: isLean(), holders: state.holders };
}
