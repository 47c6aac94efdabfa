import "server-only";
import type { Step } from "../core/execute-run";
import { withDurableWaits } from "@/lib/nodes/durable-wait";

/** The part of Inngest's `step` the engine uses: durable steps and durable sleeps. */
export type InngestSteps = {
  run<T>(id: string, fn: () => Promise<T>): Promise<unknown>;
  sleep(id: string, time: number): Promise<void>;
};

/** A node's batch step: `node:<id>:batch:<n>` (the engine's name for it). */
const BATCH_STEP = /^node:.+:batch:\d+$/;

/** The longest sleep between two runs of a waiting step: well under the sweep's 10 minutes without a heartbeat. */
export const MAX_DURABLE_SLEEP_MS = 5 * 60_000;

/**
 * How long a waiting step sleeps before its `poll`-th run again: what it asked for, growing by half each time up to
 * MAX_DURABLE_SLEEP_MS (never below what it asked for, nor below Inngest's resolution of 1 s), so a day-long provider
 * batch takes a few hundred steps, not thousands, and is still looked at every 5 minutes.
 */
export function durableSleepMs(asked: number, poll: number): number {
  return Math.round(Math.max(1_000, asked, Math.min(asked * 1.5 ** (poll - 1), MAX_DURABLE_SLEEP_MS)));
}

/** What a batch step that asked for a durable wait leaves as its result (a NodeSummary never has this key). */
type Waiting = { durableWaitMs: number };
const isWaiting = (value: unknown): value is Waiting => typeof value === "object" && value !== null && "durableWaitMs" in value;

/**
 * The engine's Step over Inngest's. A node's batch step may ask for a durable wait (lib/nodes/durable-wait.ts): its
 * Inngest step then ends with that request as its result, the function sleeps (`step.sleep`, no invocation held),
 * and the same batch step runs again as `<id>:poll:<n>` until it finishes; the engine sees one step and its final
 * summary. Every other step is Inngest's step as it is.
 */
export function inngestStep(step: InngestSteps): Step {
  return {
    async run<T>(id: string, fn: () => Promise<T>): Promise<T> {
      if (!BATCH_STEP.test(id)) return (await step.run(id, fn)) as T;
      for (let poll = 0; ; poll++) {
        const result = await step.run(poll === 0 ? id : `${id}:poll:${poll}`, async () => {
          const { value, waitMs } = await withDurableWaits(fn);
          return waitMs === undefined ? value : ({ durableWaitMs: waitMs } satisfies Waiting);
        });
        if (!isWaiting(result)) return result as T;
        await step.sleep(`${id}:wait:${poll + 1}`, durableSleepMs(result.durableWaitMs, poll + 1));
      }
    },
  };
}
