/**
 * The cost of a Prometheus scrape (GET /api/metrics) with a large run history: 1,000,000 finished runs and 10,000
 * PENDING on PostgreSQL (a fresh database on the server of DATABASE_URL, dropped at the end). The queue gauges read
 * the database at each scrape through the partial index of PENDING runs, so their cost follows the queue, not the
 * history. Prints the plan of the queue statement (EXPLAIN ANALYZE) and the scrape's time over `--scrapes` scrapes
 * (median, p95, max), beside the load. Target: ≤ 50 ms.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx --conditions=react-server bench/metrics-scrape.ts [--finished 1000000] [--pending 10000]
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { sql } from "drizzle-orm";
import { execRows } from "@/db/client";
import { resetConfig } from "@/lib/config";
import { scrapeMetrics } from "@/lib/services/operations/render-metrics";
import { benchAccount, benchDb, benchEnv, benchExit } from "./bench-support";

const { values: args } = parseArgs({
  options: {
    finished: { type: "string", default: "1000000" },
    pending: { type: "string", default: "10000" },
    workflows: { type: "string", default: "1000" },
    scrapes: { type: "string", default: "50" },
  },
});
const FINISHED = Number(args.finished);
const PENDING = Number(args.pending);
const WORKFLOWS = Number(args.workflows);
const SCRAPES = Number(args.scrapes);
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL) throw new Error("Set DATABASE_URL to a PostgreSQL server: this bench measures the PostgreSQL path.");
  benchEnv({ METRICS_TOKEN: "bench-metrics-token" });
  const { db } = await benchDb();
  resetConfig();
  const accountId = await benchAccount();
  const t0 = performance.now();
  await db.execute(sql`insert into workflows (id, account_id, name, graph, version)
    select 'wf_bench_' || g, ${accountId}, 'bench', '{"nodes":[],"edges":[]}'::jsonb, 1 from generate_series(1, ${WORKFLOWS}) g`);
  // Finished runs spread over a month, in batches so the WAL and memory stay small.
  const batch = 200_000;
  for (let from = 1; from <= FINISHED; from += batch) {
    const to = Math.min(FINISHED, from + batch - 1);
    await db.execute(sql`insert into runs (id, workflow_id, account_id, workflow_version, graph, status, enqueued_at, started_at, completed_at, result)
      select 'run_done_' || g, 'wf_bench_' || (1 + g % ${WORKFLOWS}), ${accountId}, 1, '{}'::jsonb,
             case when g % 10 = 0 then 'FAILED' else 'SUCCESS' end,
             now() - make_interval(secs => g * 2.5), now() - make_interval(secs => g * 2.5 - 1), now() - make_interval(secs => g * 2.5 - 2),
             '{"emailsSent":1,"filteredOut":0,"totalRows":1}'::jsonb
      from generate_series(${from}::int, ${to}::int) g`);
  }
  await db.execute(sql`insert into runs (id, workflow_id, account_id, workflow_version, graph, status, enqueued_at)
    select 'run_wait_' || g, 'wf_bench_' || (1 + g % ${WORKFLOWS}), ${accountId}, 1, '{}'::jsonb, 'PENDING', now() - make_interval(secs => g * 0.01)
    from generate_series(1, ${PENDING}) g`);
  await db.execute(sql`vacuum analyze runs`);
  const seeded = (performance.now() - t0) / 1000;

  const plan = await execRows<{ "QUERY PLAN": string }>(
    db,
    sql`explain (analyze, buffers) select count(*) as pending, extract(epoch from (now() - min(enqueued_at))) as oldest from runs where status = 'PENDING'`,
  );
  console.log("queue statement plan:\n  " + plan.map((r) => r["QUERY PLAN"]).join("\n  "));
  const usesIndex = plan.some((r) => /runs_pending_idx/.test(r["QUERY PLAN"])) && !plan.some((r) => /Seq Scan on runs/.test(r["QUERY PLAN"]));

  const auth = "Bearer bench-metrics-token";
  for (let i = 0; i < 5; i++) await scrapeMetrics(auth); // warm: prepared statement, JIT of the rendering
  const times: number[] = [];
  let body = "";
  for (let i = 0; i < SCRAPES; i++) {
    const started = performance.now();
    body = (await scrapeMetrics(auth)).body;
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const pending = Number(/^flowmail_runs_pending (\d+)$/m.exec(body)?.[1]);
  const oldest = Number(/^flowmail_oldest_pending_run_age_seconds ([\d.]+)$/m.exec(body)?.[1]);
  const median = times[Math.floor(times.length / 2)];
  const p95 = times[Math.min(times.length - 1, Math.floor(times.length * 0.95))];
  // The median is the figure held to the target: on a shared machine single scrapes wait for the CPU now and then.
  const ok = usesIndex && pending === PENDING && oldest >= PENDING * 0.01 - 1 && median <= 50;
  console.log(
    `metrics-scrape: runs finished=${FINISHED} pending=${PENDING} (seeded in ${seeded.toFixed(0)} s) gauges pending=${pending} oldest=${oldest.toFixed(1)} s ` +
      `scrape median=${median.toFixed(2)} ms p95=${p95.toFixed(2)} ms max=${times[times.length - 1].toFixed(2)} ms over ${SCRAPES} (target ≤ 50 ms) ` +
      `index=${usesIndex ? "runs_pending_idx" : "NOT USED"} load=${load()}`,
  );
  await benchExit(ok ? 0 : 1);
}

main().catch(async (error: unknown) => {
  console.error(error);
  await benchExit(1);
});
