import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local OpenAI-compatible server (Chat Completions), for tests that drive the real AI SDK.
 *
 *   const ai = await startFakeOpenAI();
 *   // account settings: provider "openai-compatible", baseUrl ai.url (ends in /v1)
 *   ai.answer((req) => ({ summary: "…", people: [...] }))   // the JSON object the model "generates"
 *   ai.failNext(2, 500)     // the next 2 requests answer 500 (429 and 5xx are retried by the SDK)
 *   ai.hangNext(1)          // the next request never answers (timeouts); hangNext(0) stops that
 *   ai.requests             // every request body received (model, messages, response_format…)
 *   ai.limit({ requestsPerWindow: 60, tokensPerWindow: 10_000, windowMs: 60_000 })
 *                           // a provider rate limit (buckets refilled continuously, full once per window): OpenAI's
 *                           // x-ratelimit-* headers on every answer, 429 with retry-after-ms beyond it
 *   ai.refuse((req) => prompt(req).includes("#1200"))   // answer 400 for these requests (a refused item)
 *   ai.quotaExhausted(true) // answer 429 insufficient_quota from now on
 *   ai.callsFor("#12")      // how many requests carried this text in their user message
 *   ai.stats                // { ok, rateLimited } answers
 *   ai.delayMs(50)          // every answer waits this long (slow model)
 *   ai.countUsage((req, content) => ({ promptTokens, completionTokens }))
 *                           // the usage every answer reports (default: 10 and 10, or the token limit's count)
 */
export type ChatRequest = {
  model: string;
  messages: { role: string; content: string }[];
  response_format?: { type: string; json_schema?: { schema: Record<string, unknown> } };
  temperature?: number;
  [key: string]: unknown;
};

export type FakeOpenAI = {
  url: string;
  requests: ChatRequest[];
  answer(fn: (req: ChatRequest) => unknown): void;
  answerText(fn: (req: ChatRequest) => string): void;
  failNext(count: number, status: number, message?: string): void;
  hangNext(count: number): void;
  limit(limits: { requestsPerWindow?: number; tokensPerWindow?: number; windowMs?: number } | null): void;
  refuse(fn: ((req: ChatRequest) => boolean) | null): void;
  quotaExhausted(on: boolean): void;
  callsFor(text: string): number;
  delayMs(ms: number): void;
  countUsage(fn: ((req: ChatRequest, content: string) => { promptTokens: number; completionTokens: number }) | null): void;
  stats: { ok: number; rateLimited: number; inFlight: number; maxInFlight: number };
  close(): Promise<void>;
};

/** Tokens of every answer of the fake (its usage and its token limit count them). */
export const COMPLETION_TOKENS = 10;

/** The user message of a request (the rendered prompt). */
export function prompt(req: ChatRequest): string {
  return req.messages.filter((m) => m.role === "user").map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");
}

/** The fake's token count: a token per 4 characters of the messages (an honest stand-in for a tokenizer). */
export function fakeTokens(req: ChatRequest): number {
  return Math.ceil(JSON.stringify(req.messages).length / 4);
}

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const requests: ChatRequest[] = [];
  let respond: (req: ChatRequest) => string = () => "{}";
  const failures: { status: number; message: string }[] = [];
  let hangs = 0;
  const hanging = new Set<http.ServerResponse>();
  let limits: { requestsPerWindow?: number; tokensPerWindow?: number; windowMs: number } | null = null;
  // OpenAI's limits behave as buckets that refill continuously (a full bucket per window): `remaining` is what is left,
  // `reset` the time until the bucket is full again.
  let bucket = { at: Date.now(), requests: 0, tokens: 0 };
  let refuse: ((req: ChatRequest) => boolean) | null = null;
  let quota = false;
  let delay = 0;
  let usageOf: ((req: ChatRequest, content: string) => { promptTokens: number; completionTokens: number }) | null = null;
  const stats = { ok: 0, rateLimited: 0, inFlight: 0, maxInFlight: 0 };

  const refill = () => {
    if (!limits) return;
    const now = Date.now();
    const elapsed = now - bucket.at;
    bucket.at = now;
    if (limits.requestsPerWindow) bucket.requests = Math.min(limits.requestsPerWindow, bucket.requests + (elapsed * limits.requestsPerWindow) / limits.windowMs);
    if (limits.tokensPerWindow) bucket.tokens = Math.min(limits.tokensPerWindow, bucket.tokens + (elapsed * limits.tokensPerWindow) / limits.windowMs);
  };
  const duration = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(3)}s` : `${Math.ceil(ms)}ms`);

  /** OpenAI's rate-limit headers ("1.5s", "250ms" resets). */
  const limitHeaders = (): Record<string, string> => {
    if (!limits) return {};
    refill();
    const headers: Record<string, string> = {};
    if (limits.requestsPerWindow) {
      headers["x-ratelimit-limit-requests"] = String(limits.requestsPerWindow);
      headers["x-ratelimit-remaining-requests"] = String(Math.floor(bucket.requests));
      headers["x-ratelimit-reset-requests"] = duration(((limits.requestsPerWindow - bucket.requests) * limits.windowMs) / limits.requestsPerWindow);
    }
    if (limits.tokensPerWindow) {
      headers["x-ratelimit-limit-tokens"] = String(limits.tokensPerWindow);
      headers["x-ratelimit-remaining-tokens"] = String(Math.floor(bucket.tokens));
      headers["x-ratelimit-reset-tokens"] = duration(((limits.tokensPerWindow - bucket.tokens) * limits.windowMs) / limits.tokensPerWindow);
    }
    return headers;
  };

  /** Takes the request from the buckets; false when one has too little (a 429). */
  const admit = (tokens: number): boolean => {
    if (!limits) return true;
    refill();
    if (limits.requestsPerWindow && bucket.requests < 1) return false;
    if (limits.tokensPerWindow && bucket.tokens < tokens) return false;
    bucket.requests -= 1;
    bucket.tokens -= tokens;
    return true;
  };

  /** Milliseconds until the request would be admitted. */
  const waitFor = (tokens: number): number => {
    if (!limits) return 0;
    const r = limits.requestsPerWindow ? ((1 - bucket.requests) * limits.windowMs) / limits.requestsPerWindow : 0;
    const t = limits.tokensPerWindow ? ((tokens - bucket.tokens) * limits.windowMs) / limits.tokensPerWindow : 0;
    return Math.max(1, Math.ceil(Math.max(r, t)));
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "Not found" } }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChatRequest;
      requests.push(body);
      stats.inFlight++;
      stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
      res.on("close", () => stats.inFlight--);
      if (hangs > 0) {
        hangs--;
        hanging.add(res);
        return;
      }
      if (quota) {
        res.writeHead(429, { "content-type": "application/json" }).end(
          JSON.stringify({ error: { message: "You exceeded your current quota, please check your plan and billing details.", type: "insufficient_quota", code: "insufficient_quota" } }),
        );
        return;
      }
      const tokens = fakeTokens(body);
      // Like OpenAI, the token limit counts the answer too (this fake's answers are 10 tokens).
      if (!admit(tokens + COMPLETION_TOKENS)) {
        stats.rateLimited++;
        const resetMs = waitFor(tokens + COMPLETION_TOKENS);
        res
          .writeHead(429, { "content-type": "application/json", ...limitHeaders(), "retry-after-ms": String(resetMs) })
          .end(JSON.stringify({ error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } }));
        return;
      }
      if (refuse?.(body)) {
        res
          .writeHead(400, { "content-type": "application/json", ...limitHeaders() })
          .end(JSON.stringify({ error: { message: "This request was refused", type: "invalid_request_error", code: "content_policy_violation" } }));
        return;
      }
      const failure = failures.shift();
      if (failure) {
        res
          .writeHead(failure.status, { "content-type": "application/json" })
          .end(JSON.stringify({ error: { message: failure.message, type: "server_error", code: null } }));
        return;
      }
      const content = respond(body);
      stats.ok++;
      const usage = usageOf?.(body, content) ?? { promptTokens: limits ? tokens : 10, completionTokens: COMPLETION_TOKENS };
      const send = () => res.writeHead(200, { "content-type": "application/json", ...limitHeaders() }).end(
        JSON.stringify({
          id: `chatcmpl-${requests.length}`,
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
          usage: { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, total_tokens: usage.promptTokens + usage.completionTokens },
        }),
      );
      if (delay > 0) setTimeout(send, delay);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    answer: (fn) => {
      respond = (req) => JSON.stringify(fn(req));
    },
    answerText: (fn) => {
      respond = fn;
    },
    failNext: (count, status, message = `Fake failure ${status}`) => {
      for (let i = 0; i < count; i++) failures.push({ status, message });
    },
    hangNext: (count) => {
      hangs = count;
    },
    limit: (next) => {
      limits = next ? { windowMs: 60_000, ...next } : null;
      bucket = { at: Date.now(), requests: next?.requestsPerWindow ?? 0, tokens: next?.tokensPerWindow ?? 0 };
    },
    refuse: (fn) => {
      refuse = fn;
    },
    quotaExhausted: (on) => {
      quota = on;
    },
    callsFor: (text) => requests.filter((r) => prompt(r).includes(text)).length,
    delayMs: (ms) => {
      delay = ms;
    },
    countUsage: (fn) => {
      usageOf = fn;
    },
    stats,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
