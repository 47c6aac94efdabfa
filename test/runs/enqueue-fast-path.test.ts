// The enqueue hot path folds the account check into the insert and batches rate-limit hits: the answers must stay
// those of the general path (401 for a revoked or unverified token, 404 for another account's workflow, exact counts).
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { execRows, getDb } from "@/db/client";
import { accounts } from "@/db/schema";
import { signAccessToken } from "@/lib/auth/tokens";
import { consumeRateLimit } from "@/lib/rate-limit";
import { createTestAccount } from "@/test/support/accounts";
import { enqueue, insertWorkflow, trigger } from "./helpers";

describe("enqueue hot path", () => {
  it("gives concurrent hits on one counter consecutive, distinct counts and stores the allowed ones", async () => {
    const key = `test:${Math.random()}`;
    const now = Date.now();
    const results = await Promise.all(Array.from({ length: 25 }, () => consumeRateLimit(key, 20, 60, now)));
    expect(results.map((r) => r.remaining).sort((a, b) => b - a)).toEqual([...Array.from({ length: 20 }, (_, i) => 19 - i), 0, 0, 0, 0, 0]);
    expect(results.filter((r) => !r.allowed)).toHaveLength(5);
    const [row] = await execRows<{ count: number }>(await getDb(), sql`select count from rate_limits where key = ${key}`);
    // A refused hit is handed back (lib/rate-limit.ts): a client that keeps knocking still gets `limit` per window.
    expect(Number(row.count)).toBe(20);
  });

  it("answers 401 to a token issued before a password change, and enqueues nothing", async () => {
    const owner = await createTestAccount();
    const workflowId = await insertWorkflow(owner.id, { nodes: [trigger], edges: [] });
    const db = await getDb();
    await db.update(accounts).set({ passwordChangedAt: new Date() }).where(eq(accounts.id, owner.id));
    const res = await enqueue(owner.token, workflowId);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("invalid_token");
    const fresh = await enqueue(await signAccessToken(owner.id, Date.now() + 5), workflowId);
    expect(fresh.status).toBe(202);
    const [row] = await execRows<{ n: number }>(db, sql`select count(*)::int as n from runs where workflow_id = ${workflowId}`);
    expect(Number(row.n)).toBe(1);
  });

  it("answers 401 to an unverified account's token", async () => {
    const owner = await createTestAccount();
    const workflowId = await insertWorkflow(owner.id, { nodes: [trigger], edges: [] });
    await (await getDb()).update(accounts).set({ emailVerifiedAt: null }).where(eq(accounts.id, owner.id));
    const res = await enqueue(owner.token, workflowId);
    expect(res.status).toBe(401);
  });

  it("answers 404 for another account's workflow and 401 for a malformed Authorization header", async () => {
    const owner = await createTestAccount();
    const other = await createTestAccount();
    const workflowId = await insertWorkflow(owner.id, { nodes: [trigger], edges: [] });
    const res = await enqueue(other.token, workflowId);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("not_found");
    const malformed = await enqueue("", workflowId, { authorization: "Basic abc" });
    expect(malformed.status).toBe(401);
    expect(malformed.body.code).toBe("invalid_token");
  });

  it("group-commits concurrent enqueues: each request gets its own answer (202, 401, 404 side by side)", async () => {
    const owner = await createTestAccount();
    const revoked = await createTestAccount();
    const other = await createTestAccount();
    const workflowId = await insertWorkflow(owner.id, { nodes: [trigger], edges: [] });
    const otherWorkflow = await insertWorkflow(other.id, { nodes: [trigger], edges: [] });
    const db = await getDb();
    await db.update(accounts).set({ passwordChangedAt: new Date() }).where(eq(accounts.id, revoked.id));
    // Issued in one tick: the first goes out alone, the rest wait for it and share the next statement.
    const calls = [
      ...Array.from({ length: 30 }, () => enqueue(owner.token, workflowId)),
      enqueue(revoked.token, workflowId), // a token revoked by a password change: 401
      enqueue(other.token, workflowId), // another account's workflow: 404
      enqueue(other.token, otherWorkflow),
    ];
    const answers = await Promise.all(calls);
    expect(answers.slice(0, 30).map((r) => r.status)).toEqual(Array(30).fill(202));
    expect(answers[30].status).toBe(401);
    expect(answers[31].status).toBe(404);
    expect(answers[32].status).toBe(202);
    const ids = answers.slice(0, 30).map((r) => r.body.runId as string);
    expect(new Set(ids).size).toBe(30);
    const rows = await execRows<{ id: string }>(db, sql`select id from runs where workflow_id = ${workflowId}`);
    expect(rows.map((r) => r.id).sort()).toEqual([...ids].sort());
    const [mine] = await execRows<{ n: number }>(db, sql`select count(*)::int as n from runs where workflow_id = ${otherWorkflow}`);
    expect(Number(mine.n)).toBe(1);
  });
});
