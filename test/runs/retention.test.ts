/**
 * Retention (CONTRACT 12): the sweep's pruneExpired deletes expired throttle, idempotency and OAuth-state rows, and
 * drops node outputs and per-email records of runs finished more than RUN_OUTPUT_RETENTION_DAYS ago, keeping the run
 * and node summaries, counts and logs; the output endpoint then answers 410 output_expired and a retry is refused.
 * A retry chain's ledger is kept while any run of the chain is still within retention.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { GET as nodeOutputHandler } from "@/app/api/workflows/runs/[runId]/nodes/[nodeId]/output/route";
import { POST as retryHandler } from "@/app/api/workflows/runs/[runId]/retry/route";
import { execRows, getDb } from "@/db/client";
import { pruneExpired } from "@/lib/engine/pg/retention";
import { newId } from "@/lib/ids";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";
import { emailEveryRowWorkflow, fakeResendForRuns, getRun, runToEnd, startTestExecutor } from "./helpers";

fakeResendForRuns();

const DAY = 86_400_000;
const output = (token: string, runId: string, nodeId: string) =>
  call(nodeOutputHandler, { path: `/api/workflows/runs/${runId}/nodes/${nodeId}/output?field=rows`, token, params: { runId, nodeId } });

describe("pruneExpired", () => {
  it("deletes expired rate-limit, idempotency and OAuth-state rows and keeps live ones", async () => {
    const db = await getDb();
    const { id } = await createTestAccount();
    const now = new Date();
    const tag = newId("run");
    await db.execute(sql`insert into rate_limits (key, window_start, count) values
      (${`old:${tag}`}, ${now.getTime() - 2 * DAY}, 3), (${`new:${tag}`}, ${now.getTime() - 1000}, 1)`);
    await db.execute(sql`insert into idempotency_keys (account_id, scope, key, resource_id, created_at) values
      (${id}, 'run', ${`old:${tag}`}, 'x', now() - interval '25 hours'), (${id}, 'run', ${`new:${tag}`}, 'y', now())`);
    await db.execute(sql`insert into oauth_states (id, account_id, code_verifier, expires_at) values
      (${`old:${tag}`}, ${id}, 'v', now() - interval '1 minute'), (${`new:${tag}`}, ${id}, 'v', now() + interval '10 minutes')`);
    // The daily quota's counts: today's and yesterday's stay (a day's count is read until it ends), older ones go.
    await db.execute(sql`insert into email_quota_counts (account_id, day, slot, n) values
      (${id}, (now() at time zone 'utc')::date, 0, 1), (${id}, (now() at time zone 'utc')::date - 1, 0, 2), (${id}, (now() at time zone 'utc')::date - 2, 0, 3)`);

    const report = await pruneExpired(db, { retentionDays: 0, now });
    expect(report.rateLimits).toBeGreaterThanOrEqual(1);
    expect(report.idempotencyKeys).toBeGreaterThanOrEqual(1);
    expect(report.oauthStates).toBeGreaterThanOrEqual(1);
    const left = await execRows<{ k: string }>(
      db,
      sql`select key as k from rate_limits where key like ${`%${tag}`}
          union all select key from idempotency_keys where key like ${`%${tag}`}
          union all select id from oauth_states where id like ${`%${tag}`}`,
    );
    expect(left.map((r) => r.k).sort()).toEqual([`new:${tag}`, `new:${tag}`, `new:${tag}`]);
    const counts = await execRows<{ n: number }>(db, sql`select n from email_quota_counts where account_id = ${id} order by n`);
    expect(counts.map((r) => r.n)).toEqual([1, 2]);
  });

  it("drops old runs' outputs and emails, keeps summaries and logs, answers 410 and refuses a retry", async () => {
    const executor = startTestExecutor();
    const db = await getDb();
    const { id, token } = await createTestAccount();
    const { workflowId } = await emailEveryRowWorkflow(id, 3, "kept");
    const old = await runToEnd(executor, token, workflowId);
    const recent = await runToEnd(executor, token, workflowId);
    expect([old.status, recent.status]).toEqual(["SUCCESS", "SUCCESS"]);
    // A FAILED run of 40 days ago, and a chain: an old FAILED root retried recently (its ledger must stay).
    await db.execute(sql`update runs set completed_at = now() - interval '40 days' where id = ${old.runId}`);
    const root = newId("run");
    const retry = newId("run");
    await db.execute(sql`insert into runs (id, workflow_id, account_id, workflow_version, graph, status, completed_at)
      select ${root}, workflow_id, account_id, workflow_version, graph, 'FAILED', now() - interval '40 days' from runs where id = ${old.runId}`);
    await db.execute(sql`insert into runs (id, workflow_id, account_id, workflow_version, graph, status, completed_at, retry_of, chain_root_id, trigger)
      select ${retry}, workflow_id, account_id, workflow_version, graph, 'SUCCESS', now(), ${root}, ${root}, 'retry' from runs where id = ${old.runId}`);
    await db.execute(sql`insert into email_sends (id, run_id, node_id, item_index, account_id, "to", subject, status)
      values (${newId("run")}, ${root}, 'out', 0, ${id}, 'a@example.com', 's', 'sent')`);

    // The webhook's lookup rows of each run's sent emails (written when their batch was marked sent).
    const lookups = async (runId: string) =>
      (await execRows<{ n: number }>(db, sql`select count(*)::int as n from email_provider_ids p join email_sends e on e.id = p.email_id where e.run_id = ${runId}`))[0].n;
    const oldIds = await execRows<{ pid: string }>(db, sql`select provider_message_id as pid from email_sends where run_id = ${old.runId}`);
    expect([oldIds.length, await lookups(old.runId), await lookups(recent.runId)]).toEqual([3, 3, 3]);

    const report = await pruneExpired(db, { retentionDays: 30 });
    expect(report.runsExpired).toBeGreaterThanOrEqual(2);
    const left = await execRows<{ n: number }>(db, sql`select count(*)::int as n from email_provider_ids where provider_message_id in (select jsonb_array_elements_text(${JSON.stringify(oldIds.map((r) => r.pid))}::jsonb))`);
    expect([left[0].n, await lookups(recent.runId)]).toEqual([0, 3]);

    const view = (await getRun(token, old.runId)).body;
    expect(view).toMatchObject({ status: "SUCCESS", result: old.result, outputExpired: true });
    expect(view.nodes.src).toMatchObject({ status: "SUCCESS", output: null, itemsOut: 3 });
    expect(view.logs.length).toBe(old.logs.length);
    const gone = await output(token, old.runId, "src");
    expect(gone.status).toBe(410);
    expect(gone.body.code).toBe("output_expired");
    expect((await output(token, recent.runId, "src")).status).toBe(200);
    const ledger = await execRows<{ run_id: string }>(db, sql`select distinct run_id from email_sends where run_id in (${old.runId}, ${recent.runId}, ${root})`);
    expect(ledger.map((r) => r.run_id).sort()).toEqual([recent.runId, root].sort());

    const refused = await call(retryHandler, { method: "POST", path: `/api/workflows/runs/${root}/retry`, token, params: { runId: root } });
    expect(refused.status).toBe(410);
    expect(refused.body.code).toBe("output_expired");
  });
});
