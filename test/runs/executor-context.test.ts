import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";

/**
 * The enqueue route pokes the executor from inside a request. The job that poke starts (and every run it executes)
 * must not carry the request's async context: Next.js keeps its request stores in AsyncLocalStorage, and its fetch
 * reads them to treat a call as the request's own (the provider call of every run the job executes, 11 % of a tiny
 * run's CPU in bench/tiny-runs), and they would stay reachable as long as the job runs.
 */
describe("the embedded executor's async context", () => {
  it("runs a job poked from inside a request outside that request's context", async () => {
    const request = new AsyncLocalStorage<{ path: string }>();
    const seen: ({ path: string } | undefined)[] = [];
    const executor = new EmbeddedExecutor({
      getDb: () => {
        seen.push(request.getStore());
        return getDb();
      },
      concurrency: 1,
    });
    // A workflow with no PENDING run: the job asks for the database, claims nothing and ends.
    request.run({ path: "/api/workflows/x/run" }, () => {
      expect(request.getStore()).toEqual({ path: "/api/workflows/x/run" });
      executor.poke(randomUUID());
    });
    await executor.idle();
    // It asked for its databases (getDb, and getDb again for the run state) with no request's store in sight.
    expect(seen.length).toBeGreaterThan(0);
    expect(new Set(seen)).toEqual(new Set([undefined]));
    await executor.stop();
  });
});
