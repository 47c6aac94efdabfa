import { describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";

/**
 * A process stops its executor and then closes the database (test/faults/executor-process.ts, the test files' teardown).
 * A sweep the timer started just before must be finished by then, or it queries a closed pool ("run sweep failed …
 * CONNECTION_ENDED"); and a tick that comes while a sweep still runs must not start a second one alongside it.
 */
function executorWithHeldSweeps(sweepIntervalMs: number) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const counts = { started: 0, finished: 0 };
  // Every sweep starts with getDb, which waits at the gate until released.
  const executor = new EmbeddedExecutor({ getDb: () => gate.then(getDb), concurrency: 1, sweepIntervalMs });
  const sweep = executor.sweep.bind(executor);
  executor.sweep = async (staleSeconds) => {
    counts.started++;
    try {
      await sweep(staleSeconds);
    } finally {
      counts.finished++;
    }
  };
  return { executor, counts, release };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("stopping the embedded executor", () => {
  it("waits for the sweep in flight, and never runs two sweeps at once", async () => {
    const { executor, counts, release } = executorWithHeldSweeps(5);
    executor.start();
    await sleep(100);
    // About twenty ticks came while the first sweep waited at the gate: none started another sweep.
    expect(counts).toEqual({ started: 1, finished: 0 });

    let stopped = false;
    const stopping = executor.stop().then(() => (stopped = true));
    await sleep(100);
    expect(stopped).toBe(false);

    release();
    await stopping;
    expect(counts).toEqual({ started: 1, finished: 1 });
    await sleep(50);
    expect(counts.started).toBe(1);
  });

  it("hand-back waits for the sweep in flight too", async () => {
    const { executor, counts, release } = executorWithHeldSweeps(3_600_000);
    executor.start();
    let handedBack: boolean | undefined;
    const handing = executor.handBack(5_000).then((clean) => (handedBack = clean));
    await sleep(100);
    expect(handedBack).toBeUndefined();
    release();
    await handing;
    expect(handedBack).toBe(true);
    expect(counts).toEqual({ started: 1, finished: 1 });
  });
});
