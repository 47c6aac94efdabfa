// AI pacing against a rate-limited fake provider: ITEMS items (default 5,000) in two runs of two workflows sharing one
// provider key, each an AI node with forEach, against the OpenAI-compatible fake enforcing RPM requests and TPM tokens a
// minute (buckets refilled continuously, 429 with retry-after-ms beyond; test/support/fake-openai.ts). The account's
// AI settings state the same limits. Prints the total time against the floor the limits allow (max of items / RPM and
// tokens / TPM) and the share of answers that were 429s. Targets: within 10 % of the floor, at most 2 % 429s.
// Usage: npx tsx --conditions=react-server bench/ai-pacing.ts   (DATABASE_URL=postgres://… for PostgreSQL)
//        BENCH_ITEMS=5000 BENCH_RPM=6000 BENCH_TPM=300000 BENCH_CONCURRENCY=8
import os from "node:os";
import { benchAccount, benchDb, benchEnv, benchExit, benchUpload, benchWorkflow } from "./bench-support";

const ITEMS = Number(process.env.BENCH_ITEMS ?? 5000);
const RPM = Number(process.env.BENCH_RPM ?? 6000);
const TPM = Number(process.env.BENCH_TPM ?? 300_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);

async function main() {
  benchEnv();
  const { driver } = await benchDb();
  const { eq } = await import("drizzle-orm");
  const { getDb } = await import("@/db/client");
  const { accounts } = await import("@/db/schema");
  const { encryptSecret } = await import("@/lib/crypto");
  const { enqueueRun } = await import("@/lib/engine/pg/enqueue-run");
  const { getRun } = await import("@/lib/services/runs/get-run");
  const { startEmbeddedExecutor, stopEmbeddedExecutor } = await import("@/lib/engine/drivers/embedded-executor");
  const { startFakeOpenAI, fakeTokens, COMPLETION_TOKENS } = await import("@/test/support/fake-openai");

  const ai = await startFakeOpenAI();
  ai.limit({ requestsPerWindow: RPM, tokensPerWindow: TPM, windowMs: 60_000 });
  ai.answer(() => ({ line: "Thanks for being with us." }));
  const accountId = await benchAccount();
  await (await getDb())
    .update(accounts)
    .set({
      aiProvider: "openai-compatible",
      aiModel: "bench-model",
      aiBaseUrl: ai.url,
      aiKeyEncrypted: encryptSecret("sk-bench-1234"),
      aiKeyLast4: "1234",
      aiRequestsPerMinute: RPM,
      aiTokensPerMinute: TPM,
      aiMaxConcurrency: CONCURRENCY,
    })
    .where(eq(accounts.id, accountId));
  const half = Math.ceil(ITEMS / 2);
  const uploadId = await benchUpload(accountId, ["name", "email"], half, (i) => [`Person ${i}`, `person${i}@example.com`]);
  const graph = (label: string) => ({
    nodes: [
      { id: "t", type: "TRIGGER", data: {} },
      { id: "src", type: "DATA_SOURCE", data: { uploadId } },
      { id: "ai", type: "AI", data: { forEach: "{{src.rows}}", prompt: `${label}: one line of thanks for {{item.name}}`, output: [{ name: "line", type: "string" }] } },
    ],
    edges: [
      { source: "t", target: "src" },
      { source: "src", target: "ai" },
    ],
  });
  const workflows = [await benchWorkflow(accountId, graph("A")), await benchWorkflow(accountId, graph("B"))];

  const executor = startEmbeddedExecutor({ getDb, concurrency: 4, sweepIntervalMs: 3_600_000 });
  const t0 = performance.now();
  const runs = await Promise.all(workflows.map((id) => enqueueRun(accountId, id, undefined)));
  await executor.idle();
  const elapsedS = (performance.now() - t0) / 1000;
  const statuses = await Promise.all(runs.map(async ({ run }) => (await getRun(accountId, run.runId, "map")).status));
  await stopEmbeddedExecutor();

  const answered = ai.requests.length - ai.stats.rateLimited;
  // The fake's token limit counts each answered request's prompt and answer.
  const tokens = ai.requests.reduce((sum, r) => sum + fakeTokens(r) + COMPLETION_TOKENS, 0) * (answered / Math.max(1, ai.requests.length));
  const floorS = Math.max((answered / RPM) * 60, (tokens / TPM) * 60);
  const share429 = ai.stats.rateLimited / Math.max(1, ai.requests.length);
  const load = os.loadavg().map((l) => l.toFixed(2)).join(" ");
  console.log(`ai-pacing (${driver}): ${answered} items in 2 runs sharing one key (${statuses.join(", ")}), RPM ${RPM}, TPM ${TPM}, maxConcurrency ${CONCURRENCY}`);
  console.log(`  total ${elapsedS.toFixed(1)} s vs floor ${floorS.toFixed(1)} s (${((elapsedS / floorS - 1) * 100).toFixed(1)} % above)`);
  console.log(`  429s: ${ai.stats.rateLimited} of ${ai.requests.length} answers (${(share429 * 100).toFixed(2)} %); max in flight at the provider ${ai.stats.maxInFlight}`);
  console.log(`  load average ${load} on ${os.cpus().length} cores`);
  await ai.close();
  await benchExit(statuses.every((s) => s === "SUCCESS") ? 0 : 1);
}

main().catch(async (error: unknown) => {
  console.error(error);
  await benchExit(1);
});
