import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { getDb } from "@/db/client";
import { accounts } from "@/db/schema";
import { encryptSecret } from "@/lib/crypto";
import { POST as cancelHandler } from "@/app/api/workflows/runs/[runId]/cancel/route";
import { POST as retryHandler } from "@/app/api/workflows/runs/[runId]/retry/route";
import { GET as itemsHandler } from "@/app/api/workflows/runs/[runId]/nodes/[nodeId]/items/route";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";
import { fakeResendForRuns, startTestExecutor, trigger, type TestGraph } from "@/test/runs/helpers";
import { prompt, startFakeOpenAI, type FakeOpenAI } from "@/test/support/fake-openai";
import type { FakeResend } from "@/test/support/fake-resend";
import type { EmbeddedExecutor } from "@/lib/engine/drivers/embedded-executor";
import { aiItemPolicy } from "@/lib/nodes/ai/run-items";
import { aiLimiterPolicy } from "@/lib/ai/limiter";

/**
 * What the AI test files share, called at a file's top level: a fake Resend for the runs' emails, the local
 * OpenAI-compatible fake and the test executor (started before the file's tests, closed after), and before each test
 * the item policy (`policy` over its defaults, so tests wait milliseconds instead of seconds), the limiter's policy
 * (`limiter` over its defaults) and a fake with no limit, failure or delay that greets each item ("Hi <name>").
 */
export function aiTestBed(policy: Partial<typeof aiItemPolicy>, limiter: Partial<typeof aiLimiterPolicy> = {}) {
  const mail = fakeResendForRuns();
  const itemDefaults = { ...aiItemPolicy };
  const limiterDefaults = { ...aiLimiterPolicy };
  let ai: FakeOpenAI | undefined;
  let executor: EmbeddedExecutor | undefined;
  beforeAll(async () => {
    ai = await startFakeOpenAI();
    executor = startTestExecutor();
  });
  afterAll(async () => {
    Object.assign(aiItemPolicy, itemDefaults);
    Object.assign(aiLimiterPolicy, limiterDefaults);
    await ai?.close();
  });
  beforeEach(() => {
    Object.assign(aiItemPolicy, itemDefaults, policy);
    Object.assign(aiLimiterPolicy, limiterDefaults, limiter);
    const fake = ai!;
    fake.limit(null);
    fake.refuse(null);
    fake.hangNext(0);
    fake.delayMs(0);
    fake.quotaExhausted(false);
    fake.answer((req) => ({ greeting: `Hi ${itemOf(prompt(req))}` }));
    fake.stats.ok = fake.stats.rateLimited = fake.stats.maxInFlight = 0;
  });
  return {
    get ai(): FakeOpenAI {
      if (!ai) throw new Error("the fake model starts in beforeAll");
      return ai;
    },
    get executor(): EmbeddedExecutor {
      if (!executor) throw new Error("the executor starts in beforeAll");
      return executor;
    },
    get resend(): FakeResend {
      return mail.resend;
    },
  };
}

/** An account whose AI provider is the local fake (openai-compatible at `baseUrl`). */
export async function accountWithAi(baseUrl: string, settings: Partial<typeof accounts.$inferInsert> = {}) {
  const account = await createTestAccount();
  const key = `sk-test-${account.id.slice(-8)}`;
  await (await getDb())
    .update(accounts)
    .set({ aiProvider: "openai-compatible", aiModel: "fake-model", aiBaseUrl: baseUrl, aiKeyEncrypted: encryptSecret(key), aiKeyLast4: key.slice(-4), ...settings })
    .where(eq(accounts.id, account.id));
  return account;
}

/** `n` rows of people: name "P<i>", email p<i>@example.com. */
export const peopleRows = (n: number) => Array.from({ length: n }, (_, i) => [`P${i}`, `p${i}@example.com`]);

/**
 * TRIGGER → DATA_SOURCE → AI (one call per row, the prompt naming the row as "[item <name>]") → OUTPUT of the items,
 * whose body is the declared `greeting`.
 */
export function perRowGraph(uploadId: string, ai: Record<string, unknown> = {}): TestGraph {
  return {
    nodes: [
      trigger,
      { id: "src", type: "DATA_SOURCE", data: { uploadId } },
      {
        id: "ai",
        type: "AI",
        data: { forEach: "{{src.rows}}", prompt: "Greet [item {{item.name}}]", output: [{ name: "greeting", type: "string" }], ...ai },
      },
      { id: "out", type: "OUTPUT", data: { forEach: "{{ai.items}}", to: "{{item.email}}", subject: "Hello", body: "{{item.greeting}}" } },
    ],
    edges: [
      { source: "t", target: "src" },
      { source: "src", target: "ai" },
      { source: "ai", target: "out" },
    ],
  };
}

/** The name the prompt of a per-row request carries ("P12" for "[item P12]"). */
export const itemOf = (text: string) => /\[item ([^\]]+)\]/.exec(text)?.[1] ?? "?";

export const cancel = (token: string, runId: string) => call(cancelHandler, { method: "POST", path: `/api/workflows/runs/${runId}/cancel`, token, params: { runId } });
export const retry = (token: string, runId: string) => call(retryHandler, { method: "POST", path: `/api/workflows/runs/${runId}/retry`, token, params: { runId } });
export const aiItems = (token: string, runId: string, nodeId: string, query = "") =>
  call(itemsHandler, { path: `/api/workflows/runs/${runId}/nodes/${nodeId}/items${query}`, token, params: { runId, nodeId } });
