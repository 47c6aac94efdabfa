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
 *                           // a provider rate limit: OpenAI's x-ratelimit-* headers on every answer, 429 beyond it
 *   ai.refuse((req) => prompt(req).includes("#1200"))   // answer 400 for these requests (a refused item)
 *   ai.quotaExhausted(true) // answer 429 insufficient_quota from now on
 *   ai.callsFor("#12")      // how many requests carried this text in their user message
 *   ai.stats                // { ok, rateLimited } answers
 *   ai.delayMs(50)          // every answer waits this long (slow model)
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
  stats: { ok: number; rateLimited: number };
  close(): Promise<void>;
};

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
  let window = { start: Date.now(), requests: 0, tokens: 0 };
  let refuse: ((req: ChatRequest) => boolean) | null = null;
  let quota = false;
  let delay = 0;
  const stats = { ok: 0, rateLimited: 0 };

  /** OpenAI's rate-limit headers for the current window ("1.5s", "250ms" resets). */
  const limitHeaders = (): Record<string, string> => {
    if (!limits) return {};
    const resetMs = Math.max(0, window.start + limits.windowMs - Date.now());
    const reset = resetMs >= 1000 ? `${(resetMs / 1000).toFixed(3)}s` : `${resetMs}ms`;
    const headers: Record<string, string> = {};
    if (limits.requestsPerWindow) {
      headers["x-ratelimit-limit-requests"] = String(limits.requestsPerWindow);
      headers["x-ratelimit-remaining-requests"] = String(Math.max(0, limits.requestsPerWindow - window.requests));
      headers["x-ratelimit-reset-requests"] = reset;
    }
    if (limits.tokensPerWindow) {
      headers["x-ratelimit-limit-tokens"] = String(limits.tokensPerWindow);
      headers["x-ratelimit-remaining-tokens"] = String(Math.max(0, limits.tokensPerWindow - window.tokens));
      headers["x-ratelimit-reset-tokens"] = reset;
    }
    return headers;
  };

  /** Counts the request against the window; false when it is over the limit (a 429). */
  const admit = (tokens: number): boolean => {
    if (!limits) return true;
    if (Date.now() >= window.start + limits.windowMs) window = { start: Date.now(), requests: 0, tokens: 0 };
    if (limits.requestsPerWindow && window.requests + 1 > limits.requestsPerWindow) return false;
    if (limits.tokensPerWindow && window.tokens + tokens > limits.tokensPerWindow) return false;
    window.requests++;
    window.tokens += tokens;
    return true;
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
      if (!admit(tokens)) {
        stats.rateLimited++;
        const resetMs = Math.max(1, window.start + (limits?.windowMs ?? 0) - Date.now());
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
      const send = () => res.writeHead(200, { "content-type": "application/json", ...limitHeaders() }).end(
        JSON.stringify({
          id: `chatcmpl-${requests.length}`,
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
          usage: { prompt_tokens: limits ? tokens : 10, completion_tokens: 10, total_tokens: (limits ? tokens : 10) + 10 },
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
      window = { start: Date.now(), requests: 0, tokens: 0 };
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
    stats,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
