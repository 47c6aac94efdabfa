import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { holdLeanHeap, leanHeapFlags, leanHeapPolicy, leanHeapState } from "./lean-heap";

describe("the lean heap while a big AI node runs", () => {
  const set = leanHeapFlags.set;
  const lingerMs = leanHeapPolicy.lingerMs;
  let flags: string[];
  beforeEach(() => {
    vi.useFakeTimers();
    flags = [];
    leanHeapFlags.set = (flag) => void flags.push(flag);
    leanHeapPolicy.lingerMs = 1_000;
  });
  afterEach(() => {
    vi.runAllTimers();
    vi.useRealTimers();
    leanHeapFlags.set = set;
    leanHeapPolicy.lingerMs = lingerMs;
  });

  it("sets V8's growing factor once for every holder, and gives the process's back after the last lets go", () => {
    const first = holdLeanHeap();
    const second = holdLeanHeap();
    expect(flags).toEqual(["--heap-growing-percent=30"]);
    expect(leanHeapState()).toEqual({ lean: true, holders: 2 });
    first();
    first(); // a second release of the same hold changes nothing
    expect(leanHeapState()).toEqual({ lean: true, holders: 1 });
    second();
    vi.advanceTimersByTime(999);
    expect(flags).toEqual(["--heap-growing-percent=30"]);
    vi.advanceTimersByTime(1);
    // This test process has no --heap-growing-percent on its command line: V8's default, 0 (its dynamic factor).
    expect(flags).toEqual(["--heap-growing-percent=30", "--heap-growing-percent=0"]);
    expect(leanHeapState()).toEqual({ lean: false, holders: 0 });
  });

  it("keeps the factor between a node's batches: a hold within the linger cancels the restore", () => {
    holdLeanHeap()();
    vi.advanceTimersByTime(500);
    const next = holdLeanHeap();
    vi.advanceTimersByTime(5_000);
    expect(flags).toEqual(["--heap-growing-percent=30"]);
    next();
    vi.advanceTimersByTime(1_000);
    expect(flags).toEqual(["--heap-growing-percent=30", "--heap-growing-percent=0"]);
  });
});
