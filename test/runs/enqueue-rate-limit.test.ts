// The enqueue hot path (Bearer, no Idempotency-Key, no body) counts its rate-limit hit inside the enqueue statement
// (lib/engine/pg/enqueue-run.ts): the answers must stay consumeRateLimit's (lib/rate-limit.ts) — exact counts under
// concurrency, refused hits handed back, 401 before 429, one counter shared with the general path, the sliding window.
import { eq, sql } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { execRows, getDb } from "@/db/client";
import { accounts } from "@/db/schema";
import { resetConfig } from "@/lib/config";
import { RATE_LIMIT_SLICES } from "@/lib/rate-limit";
import { createTestAccount } from "@/test/support/accounts";
import { enqueue, insertWorkflow, trigger } from "./helpers";

const LIMIT = 5;
const SLICE_MS = (60 * 1000) / RATE_LIMIT_SLICES;

async function counterRows(accountId: string) {
  return execRows<{ window_start: string | number; count: number }>(
    await getDb(),
    sql`select window_start, count from rate_limits where key = ${`run:${accountId}`} order by window_start`,
  );
}

async function runCount(workflowId: string): Promise<number> {
  const [row] = await execRows<{ n: number }>(await getDb(), sql`select count(*)::int as n from runs where workflow_id = ${workflowId}`);
  return Number(row.n);
}

describe("enqueue hot path: rate limit in the enqueue statement", () => {
  beforeEach(() => {
    process.env.RUN_RATE_LIMIT_PER_MINUTE = String(LIMIT);
    resetConfig();
  });
  afterEach(() => {
    delete process.env.RUN_RATE_LIMIT_PER_MINUTE;
    resetConfig();
  });

  it("allows exactly the limit among concurrent requests (one statement), hands the refused hits back, and answers RateLimit-* headers", async () => {
    const owner = await createTestAccount();
    const workflowId = await insertWorkflow(owner.id, { nodes: [trigger], edges: [] });
    const answers = await Promise.all(Array.from({ length: LIMIT + 4 }, () => enqueue(owner.token, workflowId)));
    const accepted = answers.filter((a) => a.status === 202);
    const limited = answers.filter((a) => a.status === 429);
    expect(accepted).toHaveLength(LIMIT);
    expect(limited).toHaveLength(4);
    // Each allowed hit has its own rank: remaining LIMIT-1 … 0. Which requests get in, and in which order, depends on
    // how they fall into batches on a loaded machine (seen: not the first LIMIT calls), so the ranks are compared as a set.
    expect(accepted.map((a) => Number(a.headers.get("ratelimit-remaining"))).sort((a, b) => b - a)).toEqual(
      Array.from({ length: LIMIT }, (_, i) => LIMIT - 1 - i),
    );
    for (const answer of limited) {
      expect(answer.body.code).toBe("rate_limited");
      expect(answer.headers.get("content-type")).toContain("application/problem+json");
      expect(answer.headers.get("ratelimit-limit")).toBe(String(LIMIT));
      expect(answer.headers.get("ratelimit-remaining")).toBe("0");
      expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(answer.headers.get("retry-after")).toBe(answer.headers.get("ratelimit-reset"));
    }
    for (const answer of accepted) expect(answer.headers.get("location")).toBe(`/api/workflows/runs/${answer.body.runId}`);
    expect(await runCount(workflowId)).toBe(LIMIT);
    // Refused hits do not count: the counter holds the allowed ones only.
    expect((await counterRows(owner.id)).reduce((sum, r) => sum + Number(r.count), 0)).toBe(LIMIT);
    // Still refused on the next request, which is handed back too.
    expect((await enqueue(owner.token, workflowId)).status).toBe(429);
    expect((await counterRows(owner.id)).reduce((sum, r) => sum + Number(r.count), 0)).toBe(LIMIT);
  });

  it("shares one counter with the general path (Idempotency-Key requests)", async () => {
    const owner = await createTestAccount();
    const workflowId = await insertWorkflow(owner.id, { nodes: [trigger], edges: [] });
    for (let i = 0; i < LIMIT - 1; i++) expect((await enqueue(owner.token, workflowId, { "Idempotency-Key": `k-${i}` })).status).toBe(202);
    const last = await enqueue(owner.token, workflowId);
    expect(last.status).toBe(202);
    expect(last.headers.get("ratelimit-remaining")).toBe("0");
    expect((await enqueue(owner.token, workflowId)).status).toBe(429);
    expect((await enqueue(owner.token, workflowId, { "Idempotency-Key": "k-last" })).status).toBe(429);
  });

  it("answers 401, not 429, to a revoked token over the limit, and 401 to a revoked token within it", async () => {
    const owner = await createTestAccount();
    const workflowId = await insertWorkflow(owner.id, { nodes: [trigger], edges: [] });
    for (let i = 0; i < LIMIT; i++) expect((await enqueue(owner.token, workflowId)).status).toBe(202);
    await (await getDb()).update(accounts).set({ passwordChangedAt: new Date() }).where(eq(accounts.id, owner.id));
    const over = await enqueue(owner.token, workflowId);
    expect(over.status).toBe(401);
    expect(over.body.code).toBe("invalid_token");

    const fresh = await createTestAccount();
    const freshWorkflow = await insertWorkflow(fresh.id, { nodes: [trigger], edges: [] });
    await (await getDb()).update(accounts).set({ passwordChangedAt: new Date() }).where(eq(accounts.id, fresh.id));
    expect((await enqueue(fresh.token, freshWorkflow)).status).toBe(401);
    expect(await runCount(freshWorkflow)).toBe(0);
  });

  it("counts the earlier slices still in the window (Retry-After from the oldest) and drops the ones that left it", async () => {
    const owner = await createTestAccount();
    const workflowId = await insertWorkflow(owner.id, { nodes: [trigger], edges: [] });
    const key = `run:${owner.id}`;
    const now = Date.now();
    const slice = Math.floor(now / SLICE_MS) * SLICE_MS;
    const inWindow = slice - 3 * SLICE_MS;
    const expired = slice - (RATE_LIMIT_SLICES + 2) * SLICE_MS;
    const db = await getDb();
    await execRows(db, sql`insert into rate_limits (key, window_start, count) values (${key}, ${inWindow}, ${LIMIT - 1}), (${key}, ${expired}, 50)`);
    const first = await enqueue(owner.token, workflowId);
    expect(first.status).toBe(202);
    expect(first.headers.get("ratelimit-remaining")).toBe("0");
    // The hit opened its slice: the slice that left the window is gone, the one inside it stays.
    expect((await counterRows(owner.id)).map((r) => Number(r.window_start))).toEqual([inWindow, expect.any(Number)]);
    const refused = await enqueue(owner.token, workflowId);
    expect(refused.status).toBe(429);
    const resetAt = inWindow + SLICE_MS * (RATE_LIMIT_SLICES + 1);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(Math.ceil((resetAt - Date.now()) / 1000));
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil((resetAt - now) / 1000));
  });

  it("answers 404 for another account's workflow among allowed requests, the hit still counted", async () => {
    const owner = await createTestAccount();
    const other = await createTestAccount();
    const workflowId = await insertWorkflow(owner.id, { nodes: [trigger], edges: [] });
    const answers = await Promise.all([enqueue(other.token, workflowId), enqueue(owner.token, workflowId)]);
    expect(answers.map((a) => a.status)).toEqual([404, 202]);
    expect((await counterRows(other.id)).reduce((sum, r) => sum + Number(r.count), 0)).toBe(1);
  });
});
