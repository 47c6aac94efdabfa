// Schedules are capped per account, and scheduled runs count against the account's run rate limit like every other
// run, so a pile of "every minute" schedules cannot get around it.
import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import * as workflowRoute from "@/app/api/workflows/[workflowId]/route";
import * as workflowsRoute from "@/app/api/workflows/route";
import { execRows, getDb } from "@/db/client";
import { setClock } from "@/lib/clock";
import { resetConfig } from "@/lib/config";
import { enqueueDueSlots } from "@/lib/engine/pg/enqueue-due-slots";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";

const graph = {
  nodes: [
    { id: "start", type: "TRIGGER", data: {} },
    { id: "mail", type: "OUTPUT", data: { forEach: "{{start.body.list}}", to: "{{item}}", subject: "s", body: "b" } },
  ],
  edges: [{ source: "start", target: "mail" }],
};

afterEach(() => {
  setClock();
  delete process.env.SCHEDULES_PER_ACCOUNT;
  delete process.env.RUN_RATE_LIMIT_PER_MINUTE;
  resetConfig();
});

const create = (token: string, schedule?: unknown) => call(workflowsRoute.POST, { json: { name: "Scheduled", graph, schedule }, token });
const patch = (token: string, workflowId: string, body: unknown) =>
  call(workflowRoute.PATCH, { method: "PATCH", path: `/api/workflows/${workflowId}`, params: { workflowId }, json: body, token });

describe("schedules per account", () => {
  it("refuses a schedule beyond SCHEDULES_PER_ACCOUNT with 422, on create and on update; changing a rule is fine", async () => {
    process.env.SCHEDULES_PER_ACCOUNT = "2";
    resetConfig();
    const { token } = await createTestAccount();
    const first = await create(token, { cron: "0 9 * * *" });
    expect(first.status, first.text).toBe(201);
    expect((await create(token, { cron: "0 10 * * *" })).status).toBe(201);
    const third = await create(token, { cron: "0 11 * * *" });
    expect(third.status).toBe(422);
    expect(third.body.code).toBe("invalid_schedule");
    expect(third.body.errors).toEqual([expect.objectContaining({ path: "schedule", code: "too_many_schedules" })]);
    const plain = await create(token);
    expect(plain.status).toBe(201);
    expect((await patch(token, plain.body.id, { schedule: { cron: "0 12 * * *" } })).status).toBe(422);
    expect((await patch(token, first.body.id, { schedule: { cron: "30 9 * * *" } })).status).toBe(200);
    expect((await patch(token, first.body.id, { schedule: null })).status).toBe(200);
    expect((await patch(token, plain.body.id, { schedule: { cron: "0 12 * * *" } })).status).toBe(200);
    // Another account has its own allowance.
    expect((await create((await createTestAccount()).token, { cron: "0 9 * * *" })).status).toBe(201);
  });
});

describe("scheduled runs and the run rate limit", () => {
  it("enqueues no more scheduled runs per minute than RUN_RATE_LIMIT_PER_MINUTE allows; the rest are skipped", async () => {
    process.env.RUN_RATE_LIMIT_PER_MINUTE = "2";
    resetConfig();
    setClock(() => Date.parse("2026-11-24T16:00:10.000Z"));
    const { id: accountId, token } = await createTestAccount();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await create(token, { cron: "* * * * *" })).body.id);
    const result = await enqueueDueSlots(await getDb(), new Date("2026-11-24T16:01:00.500Z"), () => {});
    expect(result.enqueued.filter((e) => ids.includes(e.workflowId))).toHaveLength(2);
    expect(result.skipped).toBeGreaterThanOrEqual(1);
    const [row] = await execRows<{ n: number }>(await getDb(), sql`select count(*)::int as n from runs where account_id = ${accountId}`);
    expect(row.n).toBe(2);
    // Every schedule moved on to its next slot, the skipped one too.
    const next = await execRows<{ at: string | Date }>(await getDb(), sql`select schedule_next_at as at from workflows where account_id = ${accountId}`);
    for (const n of next) expect(new Date(n.at).toISOString()).toBe("2026-11-24T16:02:00.000Z");
  });
});
