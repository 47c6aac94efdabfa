// The enqueue hot path inserts its batch's runs, then hands refused rate-limit hits back in a second statement
// (settleCountedHits). Should that statement fail, the runs are in: their requests must still get 202 (a client that
// saw an error would enqueue again), and the refused ones 429.
import { sql } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { execRows, getDb } from "@/db/client";
import { resetConfig } from "@/lib/config";
import { createTestAccount } from "@/test/support/accounts";
import { enqueue, insertWorkflow, trigger } from "./helpers";

const failing = vi.hoisted(() => ({ settle: false }));

vi.mock("@/lib/rate-limit", async (importOriginal) => {
  const original = await importOriginal<typeof import("@/lib/rate-limit")>();
  return {
    ...original,
    settleCountedHits: async (...args: Parameters<typeof original.settleCountedHits>) => {
      if (failing.settle) throw new Error("connection lost");
      return original.settleCountedHits(...args);
    },
  };
});

describe("enqueue hot path: the refund statement fails", () => {
  beforeEach(() => {
    process.env.RUN_RATE_LIMIT_PER_MINUTE = "2";
    resetConfig();
  });
  afterEach(() => {
    failing.settle = false;
    delete process.env.RUN_RATE_LIMIT_PER_MINUTE;
    resetConfig();
  });

  it("answers 202 for the runs it inserted and 429 for the refused, the refused hits left counted", async () => {
    const owner = await createTestAccount();
    const workflowId = await insertWorkflow(owner.id, { nodes: [trigger], edges: [] });
    failing.settle = true;
    const answers = await Promise.all(Array.from({ length: 4 }, () => enqueue(owner.token, workflowId)));
    // Which two get in depends on how the four requests fall into batches on a loaded machine: two do, two do not.
    expect(answers.map((a) => a.status).sort()).toEqual([202, 202, 429, 429]);
    const accepted = answers.filter((a) => a.status === 202);
    const db = await getDb();
    const [runs] = await execRows<{ n: number }>(db, sql`select count(*)::int as n from runs where workflow_id = ${workflowId}`);
    expect(Number(runs.n)).toBe(2);
    for (const answer of accepted) {
      const [row] = await execRows<{ id: string }>(db, sql`select id from runs where id = ${answer.body.runId as string}`);
      expect(row?.id).toBe(answer.body.runId);
    }
    // Not handed back: the counter holds all four hits until their slice leaves the window.
    const [counter] = await execRows<{ n: number }>(db, sql`select coalesce(sum(count), 0)::int as n from rate_limits where key = ${`run:${owner.id}`}`);
    expect(Number(counter.n)).toBe(4);
  });
});
