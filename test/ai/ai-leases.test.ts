/**
 * The shared model-call limiter's leases: a call's in-flight slot stays leased while the process holding it lives
 * (renewed on a timer per database handle), and the timer stops once no slot is held.
 */
import { sql } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { execRows, getDb } from "@/db/client";
import { dbState } from "@/db/handle-state";
import { acquireAiCall, aiLimiterPolicy, releaseAiCall } from "@/lib/ai/limiter";

const saved = { ...aiLimiterPolicy };
afterAll(() => void Object.assign(aiLimiterPolicy, saved));

describe("AI call leases", () => {
  it("renews a held slot's lease, per database handle, until the slot is released", async () => {
    Object.assign(aiLimiterPolicy, { leaseMs: 2_000, renewMs: 20 });
    const db = await getDb();
    const key = `lease-test-${Math.random()}`;
    const limits = { requestsPerMinute: null, tokensPerMinute: null, maxConcurrency: 1 };
    const slot = await acquireAiCall(db, key, limits, 10, { deadline: Date.now() + 60_000, halted: () => false });
    if (slot.kind !== "ok") throw new Error(`no slot: ${slot.kind}`);
    const leases = dbState(db, "ai-limiter-leases", () => ({ held: new Map(), timer: undefined as NodeJS.Timeout | undefined }));
    expect([leases.held.size, leases.timer !== undefined]).toEqual([1, true]);

    const leaseUntil = async () =>
      Number((await execRows<{ at: string | number }>(db, sql`select extract(epoch from lease_until)::float8 as at from ai_inflight where key = ${key} and slot = ${slot.slot}`))[0].at);
    const first = await leaseUntil();
    let renewed = first;
    for (let polls = 0; polls < 500 && renewed === first; polls++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      renewed = await leaseUntil();
    }
    expect(renewed).toBeGreaterThan(first);

    await releaseAiCall(db, key, slot.slot, limits, { tokenDelta: 0 });
    expect([leases.held.size, leases.timer]).toEqual([0, undefined]);
    expect(await leaseUntil()).toBe(-Infinity);
  });
});
