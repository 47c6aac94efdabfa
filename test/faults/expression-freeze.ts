/**
 * Can one FILTER expression freeze the server? Prints figures (not a test: run it by hand, on PostgreSQL).
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx --conditions=react-server test/faults/expression-freeze.ts
 *
 * A server process (test/faults/api-server-worker.ts: the executor and the run routes in one process) executes, over
 * a 100,000-row upload:
 *   1. FILTER `len(big.rows + big.rows + … ) > 0`: the node must fail with a sentence naming the limit within 2 s;
 *   2. FILTER `item.email in big.rows` (legal, but 100,000 comparisons per item), cancelled 300 ms after it starts:
 *      the run must be CANCELLED within 5 s of the cancel (or have failed on the work limit before).
 * Meanwhile this process asks `GET /api/health` every 50 ms (never two at once): each answer must take ≤ 250 ms.
 * Printed: each run's outcome and duration, the health latencies, the server's peak RSS, and the load average.
 */
import { signAccessToken } from "@/lib/auth/tokens";
import { benchAccount, benchDb, benchEnv, benchExit, benchUpload, benchWorkflow, mb } from "@/bench/bench-support";
import { loadAverage, treeRss } from "@/bench/server-support";
import { call, startApiServer as startServer, waitFinal, watch, type Run } from "./api-figures";

const ROWS = 100_000;

function graph(uploadId: string, expr: string) {
  const at = (x: number) => ({ x, y: 0 });
  return {
    nodes: [
      { id: "t", type: "TRIGGER", position: at(0), data: {} },
      { id: "big", type: "DATA_SOURCE", position: at(200), data: { uploadId } },
      { id: "f", type: "FILTER", position: at(400), data: { source: "{{big.rows}}", expr } },
    ],
    edges: [
      { source: "t", target: "big" },
      { source: "big", target: "f" },
    ],
  };
}

const seconds = (run: Run) => (run.startedAt && run.completedAt ? ((Date.parse(run.completedAt) - Date.parse(run.startedAt)) / 1000).toFixed(2) : "?");
const message = (run: Run) => (typeof run.error === "string" ? run.error : (run.error?.message ?? ""));

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL) throw new Error("set DATABASE_URL to a PostgreSQL server: the server runs in another process");
  benchEnv();
  await benchDb();
  const accountId = await benchAccount();
  const token = await signAccessToken(accountId);
  const uploadId = await benchUpload(accountId, ["name", "email", "rating"], ROWS, (i) => [`Person ${i}`, `person${i}@example.com`, String(i % 5)]);
  const concat = `len(${Array(6).fill("big.rows").join(" + ")}) > 0`;
  const concatWorkflow = await benchWorkflow(accountId, graph(uploadId, concat));
  const heavyWorkflow = await benchWorkflow(accountId, graph(uploadId, "item.email in big.rows"));
  const server = await startServer();
  const failures: string[] = [];
  try {
    await call(server.url, token, "GET", "/api/health");
    console.log(`load before: ${loadAverage()}, server RSS ${mb(treeRss(server.pid))} MB`);

    const first = watch(server.url, server.pid);
    const enqueued = await call(server.url, token, "POST", `/api/workflows/${concatWorkflow}/run`);
    const concatRun = await waitFinal(server.url, token, enqueued.body.runId, 60_000);
    const health1 = await first.stop();
    console.log(`1. ${concat}: ${concatRun.status} in ${seconds(concatRun)} s: ${message(concatRun)}`);
    console.log(`   health: ${JSON.stringify(health1)}`);
    if (concatRun.status !== "FAILED" || !/limit/.test(message(concatRun))) failures.push("run 1 did not fail naming a limit");
    if (Number(seconds(concatRun)) > 2) failures.push("run 1 took more than 2 s");
    if (health1.max > 250) failures.push("health took more than 250 ms during run 1");

    const second = watch(server.url, server.pid);
    const heavy = await call(server.url, token, "POST", `/api/workflows/${heavyWorkflow}/run`);
    const runId = heavy.body.runId as string;
    for (;;) {
      const { body } = await call(server.url, token, "GET", `/api/workflows/runs/${runId}`);
      if (body.startedAt || body.status !== "PENDING") break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, 300));
    const cancelAsked = performance.now();
    const cancel = await call(server.url, token, "POST", `/api/workflows/runs/${runId}/cancel`);
    const cancelAnswerMs = Math.round(performance.now() - cancelAsked);
    const heavyRun = await waitFinal(server.url, token, runId, 60_000);
    const cancelledMs = Math.round(performance.now() - cancelAsked);
    const health2 = await second.stop();
    console.log(`2. item.email in big.rows, cancelled 300 ms after it started: cancel answered ${cancel.status} in ${cancelAnswerMs} ms;`);
    console.log(`   run ${heavyRun.status} ${cancelledMs} ms after the cancel (${seconds(heavyRun)} s in all) ${message(heavyRun)}`);
    console.log(`   health: ${JSON.stringify(health2)}`);
    if (cancelledMs > 5_000) failures.push("the cancel took more than 5 s");
    if (health2.max > 250) failures.push("health took more than 250 ms during run 2");
    console.log(`load after: ${loadAverage()}`);
  } finally {
    server.kill();
  }
  console.log(failures.length ? `NOT MET: ${failures.join("; ")}` : "all targets met");
  await benchExit(failures.length ? 1 : 0);
}

main().catch(async (error: unknown) => {
  console.error(error);
  await benchExit(2);
});
