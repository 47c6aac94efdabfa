// The estimate of an AI node with forEach, against the OpenAI-compatible fake reporting usage the way OpenAI counts it
// (gpt-tokenizer's o200k_base: 3 tokens a message plus its role and content, 3 to prime the answer, and the response
// format's JSON schema; the answer's own tokens as output), for an OpenAI model (gpt-4o-mini, priced in the table):
//  1. `POST …/run { mode: "estimate", sample: 3 }` over ROWS rows (default 100,000): the time from enqueue to the
//     finished estimate (target ≤ 10 s);
//  2. the same estimate over the first ACTUAL rows (default 5,000), and an actual run over those rows: the estimate's
//     input tokens against the sum of prompt_tokens the fake reported for the same prompts (target within 2 %), and the
//     estimate's cost against the actual run's cost from the fake's reported usage (target within 15 %). 100,000 real
//     calls would take ~8 minutes on this machine against the fake, so the actual run is the smaller one; the
//     100,000-row estimate is also set beside the actual per-item figures scaled to 100,000 rows.
// The rows vary (names, companies, cities, notes of different lengths) and so do the answers, whose length follows
// the row: the sample of 3 is a real extrapolation. Prints the figures beside the load average.
// Usage: npx tsx --conditions=react-server bench/ai-estimate.ts   (DATABASE_URL=postgres://… for PostgreSQL)
//        BENCH_ROWS=100000 BENCH_ACTUAL=5000
import os from "node:os";
import { countTokens } from "gpt-tokenizer";
import { benchAiAccount, benchDb, benchEnv, benchExit, benchUpload, benchWorkflow } from "./bench-support";

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const ACTUAL = Number(process.env.BENCH_ACTUAL ?? 5000);
const SAMPLE = 3;
const PRICE = { input: 0.15, output: 0.6 }; // gpt-4o-mini, USD a million tokens (lib/ai/prices.ts)

const load = () => os.loadavg().map((l) => l.toFixed(2)).join(" ");
const pct = (a: number, b: number) => `${(((a - b) / b) * 100).toFixed(2)} %`;

const FIRST = ["Ann", "Bartholomew", "Chen", "Dolores", "Emeka", "Frédérique", "Gus", "Hiroshi", "Ines", "Jo"];
const COMPANY = ["Acme", "Globex Corporation", "Initech", "Umbrella Health Services", "Hooli", "Vandelay Industries", "Wayne Enterprises"];
const CITY = ["Berlin", "Lisbon", "Kraków", "Osaka", "Toronto", "Nairobi", "Lima", "Oslo", "San Francisco"];
const NOTES = ["new customer", "renewed twice, asked about the annual plan", "complained about shipping delays last spring", "", "VIP since 2019; prefers email over phone calls and reads every newsletter"];
const row = (i: number) => [
  `${FIRST[i % FIRST.length]} ${String.fromCharCode(65 + (i % 26))}.`,
  `user${i}@example.com`,
  COMPANY[(i * 7) % COMPANY.length],
  CITY[(i * 3) % CITY.length],
  NOTES[(i * 11) % NOTES.length],
];

async function main() {
  benchEnv();
  const { driver } = await benchDb();
  const { getDb } = await import("@/db/client");
  const { enqueueRun } = await import("@/lib/engine/pg/enqueue-run");
  const { getRun } = await import("@/lib/services/runs/get-run");
  const { startEmbeddedExecutor, stopEmbeddedExecutor } = await import("@/lib/engine/drivers/embedded-executor");
  const { startFakeOpenAI, prompt } = await import("@/test/support/fake-openai");

  const ai = await startFakeOpenAI();
  // The answer follows the row: its length varies as the prompts do.
  ai.answer((req) => {
    const text = prompt(req);
    const name = /Customer: ([^\n]+)/.exec(text)?.[1] ?? "there";
    const note = /Note: ([^\n]*)/.exec(text)?.[1] ?? "";
    return { greeting: `Dear ${name}, thank you for your loyalty${note ? ` — we noted that you ${note}` : ""}. We hope to see you again soon.` };
  });
  let reportedInput = 0;
  let reportedOutput = 0;
  ai.countUsage((req, content) => {
    const messages = req.messages.reduce((sum, m) => sum + 3 + countTokens(m.role) + countTokens(typeof m.content === "string" ? m.content : JSON.stringify(m.content)), 0);
    const schema = req.response_format?.json_schema?.schema ? countTokens(JSON.stringify(req.response_format.json_schema.schema)) : 0;
    const usage = { promptTokens: messages + 3 + schema, completionTokens: countTokens(content) };
    reportedInput += usage.promptTokens;
    reportedOutput += usage.completionTokens;
    return usage;
  });

  const accountId = await benchAiAccount({ provider: "openai", model: "gpt-4o-mini", baseUrl: ai.url, key: "sk-bench-estimate-1234" });
  const columns = ["name", "email", "company", "city", "note"];
  const graph = (uploadId: string) => ({
    nodes: [
      { id: "t", type: "TRIGGER", data: {} },
      { id: "src", type: "DATA_SOURCE", data: { uploadId } },
      {
        id: "ai",
        type: "AI",
        data: {
          forEach: "{{src.rows}}",
          system: "You write short, warm, personal greetings for a newsletter. Never invent facts.",
          prompt: "Write a greeting for this customer.\nCustomer: {{item.name}}\nCompany: {{item.company}}\nCity: {{item.city}}\nNote: {{item.note}}",
          output: [{ name: "greeting", type: "string" }],
        },
      },
    ],
    edges: [
      { source: "t", target: "src" },
      { source: "src", target: "ai" },
    ],
  });
  const big = await benchWorkflow(accountId, graph(await benchUpload(accountId, columns, ROWS, row)));
  const small = await benchWorkflow(accountId, graph(await benchUpload(accountId, columns, ACTUAL, row)));

  const executor = startEmbeddedExecutor({ getDb, concurrency: 2, sweepIntervalMs: 3_600_000 });
  const run = async (workflowId: string, estimate: boolean) => {
    const options = estimate ? { mode: "estimate" as const, triggerBody: { estimateSample: SAMPLE } } : {};
    const t0 = performance.now();
    const { run: queued } = await enqueueRun(accountId, workflowId, undefined, options);
    await executor.idle();
    const seconds = (performance.now() - t0) / 1000;
    const result = await getRun(accountId, queued.runId, "map");
    if (result.status !== "SUCCESS") throw new Error(`run ${queued.runId} ended ${result.status}: ${JSON.stringify(result.error)}`);
    return { seconds, result: result as unknown as { result: { estimate?: { inputTokens: number; outputTokens: number; costUsd: number }; ai: { calls: number; inputTokens: number; outputTokens: number; costUsd: number } } } };
  };

  const loadBefore = load();
  const bigEstimate = await run(big, true);
  const loadAfterEstimate = load();
  const smallEstimate = await run(small, true);
  reportedInput = reportedOutput = 0;
  const actual = await run(small, false);
  await stopEmbeddedExecutor();

  const e100k = bigEstimate.result.result.estimate!;
  const eSmall = smallEstimate.result.result.estimate!;
  const paid = actual.result.result.ai;
  const actualCost = (reportedInput * PRICE.input + reportedOutput * PRICE.output) / 1e6;
  console.log(`ai-estimate (${driver}), gpt-4o-mini through the fake, sample ${SAMPLE}; load average ${loadBefore} before, ${loadAfterEstimate} after the ${ROWS.toLocaleString("en")}-row estimate, ${load()} at the end, on ${os.cpus().length} cores`);
  console.log(`  ${ROWS.toLocaleString("en")}-row estimate: ${bigEstimate.seconds.toFixed(2)} s (target ≤ 10 s): ${e100k.inputTokens} input, ${e100k.outputTokens} output tokens, $${e100k.costUsd.toFixed(4)}`);
  console.log(`  ${ACTUAL.toLocaleString("en")} rows — estimate (${smallEstimate.seconds.toFixed(2)} s) vs actual run (${actual.seconds.toFixed(1)} s, ${paid.calls} calls):`);
  console.log(`    input tokens ${eSmall.inputTokens} vs ${reportedInput} reported by the fake: ${pct(eSmall.inputTokens, reportedInput)} (target within 2 %)`);
  console.log(`    output tokens ${eSmall.outputTokens} (from ${SAMPLE} answers) vs ${reportedOutput}: ${pct(eSmall.outputTokens, reportedOutput)}`);
  console.log(`    cost $${eSmall.costUsd.toFixed(5)} vs $${actualCost.toFixed(5)} (the run's own ai.costUsd: $${paid.costUsd.toFixed(5)}): ${pct(eSmall.costUsd, actualCost)} (target within 15 %)`);
  const scale = ROWS / ACTUAL;
  console.log(`  ${ROWS.toLocaleString("en")}-row estimate vs the actual run's per-item figures × ${scale}: input ${pct(e100k.inputTokens, reportedInput * scale)}, cost ${pct(e100k.costUsd, actualCost * scale)}`);
  const met = bigEstimate.seconds <= 10 && Math.abs(eSmall.inputTokens / reportedInput - 1) <= 0.02 && Math.abs(eSmall.costUsd / actualCost - 1) <= 0.15;
  console.log(`  ${met ? "targets met" : "TARGETS MISSED"}`);
  await ai.close();
  await benchExit(met ? 0 : 1);
}

main().catch(async (error: unknown) => {
  console.error(error);
  await benchExit(1);
});
