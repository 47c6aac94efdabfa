// AI pacing against rate-limited fake providers: ITEMS items (default 5,000) in two runs of two workflows sharing one
// provider key, each an AI node with forEach, through
//  - the OpenAI-compatible fake (test/support/fake-openai.ts) enforcing RPM requests and TPM tokens a minute (buckets
//    refilled continuously; x-ratelimit-* headers on every answer, 429 with retry-after-ms beyond), and
//  - the Anthropic fake (test/support/fake-anthropic.ts, limitPerMinute) enforcing RPM requests and ITPM input tokens
//    a minute (Anthropic's token buckets; anthropic-ratelimit-* headers, 429 with retry-after beyond).
// The account's AI settings state the same limits (for Anthropic, tokensPerMinute = ITPM: the limiter counts input and
// output tokens against it, so it is a little stricter than Anthropic's input-token bucket). Prints, per provider, the total time (enqueue to both runs
// finished) against the floor the limits allow — the larger of answered requests ÷ RPM and tokens ÷ the token limit —
// the time from the first call to the last, and the share of calls answered 429, beside the load average. Before the
// clock starts, 200 items go through an unlimited fake of the same kind (a warm-up: the first run of a process loads
// and compiles the provider's code, 15–40 s more here at load 10–20).
// Targets: within 10 % of the floor, at most 2 % 429s. Defaults put the floor at 75 s per provider.
// Usage: npx tsx --conditions=react-server bench/ai-pacing.ts   (DATABASE_URL=postgres://… for PostgreSQL)
//        BENCH_PROVIDERS=openai,anthropic BENCH_ITEMS=5000 BENCH_RPM=4000 BENCH_TPM=110000 BENCH_ITPM=450000
//        BENCH_CONCURRENCY=8
import os from "node:os";
import { benchAiAccount, benchDb, benchEnv, benchExit, benchUpload, benchWorkflow, type BenchAi } from "./bench-support";

const ITEMS = Number(process.env.BENCH_ITEMS ?? 5000);
const RPM = Number(process.env.BENCH_RPM ?? 4000);
/** OpenAI: tokens a minute (prompt and answer), near binding with these prompts (~26 tokens a call). */
const TPM = Number(process.env.BENCH_TPM ?? 110_000);
/** Anthropic: input tokens a minute (~83 a call); the account's tokensPerMinute is the same figure. */
const ITPM = Number(process.env.BENCH_ITPM ?? 450_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const PROVIDERS = (process.env.BENCH_PROVIDERS ?? "openai,anthropic").split(",");

const load = () => os.loadavg().map((l) => l.toFixed(2)).join(" ");

async function main() {
  benchEnv();
  const { driver } = await benchDb();
  const { getDb } = await import("@/db/client");
  const { enqueueRun } = await import("@/lib/engine/pg/enqueue-run");
  const { getRun } = await import("@/lib/services/runs/get-run");
  const { startEmbeddedExecutor, stopEmbeddedExecutor } = await import("@/lib/engine/drivers/embedded-executor");
  const { startFakeOpenAI, fakeTokens, COMPLETION_TOKENS } = await import("@/test/support/fake-openai");
  const { startFakeAnthropic, anthropicTokens } = await import("@/test/support/fake-anthropic");

  type Fake = { url: string; calls: () => number; rateLimited: () => number; tokens: () => number; close: () => Promise<void> };
  let ok = true;
  for (const provider of PROVIDERS) {
    const firstLast = { first: 0, last: 0 };
    const stamp = () => {
      const now = performance.now();
      firstLast.first ||= now;
      firstLast.last = now;
    };
    let fake: Fake;
    let settings: Pick<BenchAi, "provider" | "model" | "tokensPerMinute">;
    let tokenLimit: number;
    if (provider === "anthropic") {
      const claude = await startFakeAnthropic();
      // Input tokens are what Anthropic's ITPM counts; its output limit is set out of the way (the answers are short).
      claude.limitPerMinute({ requests: RPM, inputTokens: ITPM, outputTokens: ITPM });
      claude.answer(() => (stamp(), { line: "Thanks for being with us." }));
      fake = {
        url: claude.url,
        calls: () => claude.requests.length,
        rateLimited: () => claude.stats.rateLimited,
        tokens: () => claude.requests.reduce((sum, r) => sum + anthropicTokens(r.body), 0),
        close: () => claude.close(),
      };
      tokenLimit = ITPM;
      settings = { provider: "anthropic", model: "claude-3-5-haiku-20241022", tokensPerMinute: ITPM };
    } else {
      const ai = await startFakeOpenAI();
      ai.limit({ requestsPerWindow: RPM, tokensPerWindow: TPM, windowMs: 60_000 });
      ai.answer(() => (stamp(), { line: "Thanks for being with us." }));
      fake = {
        url: ai.url,
        calls: () => ai.requests.length,
        rateLimited: () => ai.stats.rateLimited,
        // The fake's token limit counts each request's prompt and answer.
        tokens: () => ai.requests.reduce((sum, r) => sum + fakeTokens(r) + COMPLETION_TOKENS, 0),
        close: () => ai.close(),
      };
      tokenLimit = TPM;
      settings = { provider: "openai-compatible", model: "bench-model", tokensPerMinute: TPM };
    }
    const accountId = await benchAiAccount({ ...settings, baseUrl: fake.url, key: `sk-bench-${provider}-1234`, requestsPerMinute: RPM, maxConcurrency: CONCURRENCY });
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
    // Warm-up, as freeze.ts requests each route once before measuring: 200 items through an unlimited fake of the same
    // kind with another key, so the provider's code is loaded and compiled before the clock starts.
    {
      const warm = provider === "anthropic" ? await startFakeAnthropic() : await startFakeOpenAI();
      warm.answer(() => ({ line: "Warm." }));
      const warmAccount = await benchAiAccount({ provider: settings.provider, model: settings.model, baseUrl: warm.url, key: `sk-warm-${provider}-1234` });
      const warmUpload = await benchUpload(warmAccount, ["name", "email"], 200, (i) => [`Warm ${i}`, `warm${i}@example.com`]);
      await enqueueRun(warmAccount, await benchWorkflow(warmAccount, { ...graph("W"), nodes: graph("W").nodes.map((n) => (n.id === "src" ? { ...n, data: { uploadId: warmUpload } } : n)) }), undefined);
      await executor.idle();
      await warm.close();
    }
    const loadBefore = load();
    const t0 = performance.now();
    const runs = await Promise.all(workflows.map((id) => enqueueRun(accountId, id, undefined)));
    await executor.idle();
    const elapsedS = (performance.now() - t0) / 1000;
    const statuses = await Promise.all(runs.map(async ({ run }) => (await getRun(accountId, run.runId, "map")).status));
    await stopEmbeddedExecutor();

    const calls = fake.calls();
    const answered = calls - fake.rateLimited();
    const tokens = fake.tokens() * (answered / Math.max(1, calls));
    const requestFloor = (answered / RPM) * 60;
    const tokenFloor = (tokens / tokenLimit) * 60;
    const floorS = Math.max(requestFloor, tokenFloor);
    const share429 = fake.rateLimited() / Math.max(1, calls);
    const within = elapsedS <= floorS * 1.1 && share429 <= 0.02 && statuses.every((s) => s === "SUCCESS");
    ok &&= within;
    console.log(`ai-pacing ${provider} (${driver}): ${answered} items in 2 runs sharing one key (${statuses.join(", ")}), ${RPM} requests/min, ${tokenLimit} ${provider === "anthropic" ? "input " : ""}tokens/min, maxConcurrency ${CONCURRENCY}`);
    console.log(
      `  total ${elapsedS.toFixed(1)} s vs floor ${floorS.toFixed(1)} s (requests ${requestFloor.toFixed(1)} s, tokens ${tokenFloor.toFixed(1)} s): ` +
        `${((elapsedS / floorS - 1) * 100).toFixed(1)} % above; first to last call ${((firstLast.last - firstLast.first) / 1000).toFixed(1)} s`,
    );
    console.log(`  ${(tokens / Math.max(1, answered)).toFixed(1)} tokens a call; 429s: ${fake.rateLimited()} of ${calls} calls (${(share429 * 100).toFixed(2)} %) — ${within ? "targets met" : "TARGETS MISSED"}`);
    console.log(`  load average ${loadBefore} before, ${load()} after, on ${os.cpus().length} cores`);
    await fake.close();
  }
  await benchExit(ok ? 0 : 1);
}

main().catch(async (error: unknown) => {
  console.error(error);
  await benchExit(1);
});
