import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local Anthropic Messages API (POST /v1/messages), for tests that drive the real AI SDK's Anthropic provider.
 *
 *   const claude = await startFakeAnthropic();
 *   // account settings: provider "anthropic", baseUrl claude.url (ends in /v1)
 *   claude.answer((text) => ({ greeting: "…" }))   // the JSON object the model "generates" for the user text
 *   claude.limit({ requestsPerWindow: 4, windowMs: 500 })  // anthropic-ratelimit-* headers; 429 with retry-after beyond
 *   claude.limitPerMinute({ requests: 4000, inputTokens: 300_000, outputTokens: 80_000 })
 *                                                   // Anthropic's token buckets (refilled continuously, full once a
 *                                                   // minute): anthropic-ratelimit-{requests,input-tokens,
 *                                                   // output-tokens,tokens}-* headers, 429 with retry-after beyond;
 *                                                   // usage then counts the request's real size (anthropicTokens)
 *   claude.billingError(true)                       // "Your credit balance is too low…" from now on
 *   claude.stats                                    // { ok, rateLimited }
 * The answer comes as the `json` tool's input when the request offers that tool (the SDK's JSON-tool mode), else as
 * a text block holding the JSON (native structured output).
 */
export type FakeAnthropic = {
  url: string;
  requests: { body: Record<string, unknown>; headers: http.IncomingHttpHeaders }[];
  answer(fn: (userText: string) => unknown): void;
  limit(limits: { requestsPerWindow: number; windowMs: number } | null): void;
  limitPerMinute(limits: { requests: number; inputTokens: number; outputTokens: number } | null): void;
  billingError(on: boolean): void;
  stats: { ok: number; rateLimited: number };
  close(): Promise<void>;
};

type Message = { role: string; content: string | { type: string; text?: string }[] };

export function userText(body: Record<string, unknown>): string {
  const messages = (body.messages ?? []) as Message[];
  return messages
    .filter((m) => m.role === "user")
    .map((m) => (typeof m.content === "string" ? m.content : m.content.map((c) => c.text ?? "").join("")))
    .join("\n");
}

/** Output tokens of every answer while limitPerMinute is set. */
export const ANTHROPIC_OUTPUT_TOKENS = 10;

/** The fake's input-token count of a request: a token per 4 characters of its system, messages and tools. */
export function anthropicTokens(body: Record<string, unknown>): number {
  return Math.ceil(JSON.stringify([body.system ?? null, body.messages ?? [], body.tools ?? null]).length / 4);
}

/**
 * Anthropic's per-minute limits as token buckets (its documented algorithm): each refills continuously to its
 * capacity over a minute. Output tokens are taken when the answer is sent (a request is admitted while the bucket has
 * any left, as Anthropic estimates them ahead).
 */
function perMinuteBuckets(limits: { requests: number; inputTokens: number; outputTokens: number }) {
  const names = ["requests", "input-tokens", "output-tokens"] as const;
  const capacity = { requests: limits.requests, "input-tokens": limits.inputTokens, "output-tokens": limits.outputTokens };
  const level = { ...capacity };
  let at = Date.now();
  const refill = () => {
    const now = Date.now();
    for (const n of names) level[n] = Math.min(capacity[n], level[n] + ((now - at) * capacity[n]) / 60_000);
    at = now;
  };
  const full = (n: (typeof names)[number]) => new Date(Date.now() + ((capacity[n] - level[n]) * 60_000) / capacity[n]).toISOString();
  return {
    admit(input: number): number {
      refill();
      const short = [
        level.requests < 1 ? ((1 - level.requests) * 60_000) / capacity.requests : 0,
        level["input-tokens"] < input ? ((input - level["input-tokens"]) * 60_000) / capacity["input-tokens"] : 0,
        level["output-tokens"] < 1 ? ((1 - level["output-tokens"]) * 60_000) / capacity["output-tokens"] : 0,
      ];
      const wait = Math.max(...short);
      if (wait > 0) return wait;
      level.requests -= 1;
      level["input-tokens"] -= input;
      return 0;
    },
    spend(output: number) {
      refill();
      level["output-tokens"] -= output;
    },
    headers(): Record<string, string> {
      refill();
      const headers: Record<string, string> = {};
      for (const n of names) {
        headers[`anthropic-ratelimit-${n}-limit`] = String(capacity[n]);
        headers[`anthropic-ratelimit-${n}-remaining`] = String(Math.max(0, Math.floor(level[n])));
        headers[`anthropic-ratelimit-${n}-reset`] = full(n);
      }
      // The most restrictive of the token limits, as Anthropic sends it.
      const tokens = level["input-tokens"] / capacity["input-tokens"] <= level["output-tokens"] / capacity["output-tokens"] ? "input-tokens" : "output-tokens";
      headers["anthropic-ratelimit-tokens-limit"] = String(capacity[tokens]);
      headers["anthropic-ratelimit-tokens-remaining"] = String(Math.max(0, Math.floor(level[tokens])));
      headers["anthropic-ratelimit-tokens-reset"] = full(tokens);
      return headers;
    },
  };
}

export async function startFakeAnthropic(): Promise<FakeAnthropic> {
  const requests: FakeAnthropic["requests"] = [];
  let respond: (text: string) => unknown = () => ({});
  let limits: { requestsPerWindow: number; windowMs: number } | null = null;
  let window = { start: Date.now(), requests: 0 };
  let billing = false;
  const stats = { ok: 0, rateLimited: 0 };
  let buckets: ReturnType<typeof perMinuteBuckets> | null = null;

  const limitHeaders = (): Record<string, string> => {
    if (buckets) return buckets.headers();
    if (!limits) return {};
    return {
      "anthropic-ratelimit-requests-limit": String(limits.requestsPerWindow),
      "anthropic-ratelimit-requests-remaining": String(Math.max(0, limits.requestsPerWindow - window.requests)),
      "anthropic-ratelimit-requests-reset": new Date(window.start + limits.windowMs).toISOString(),
      // A nonsensical family (a limit of 0) that must be ignored, as some proxies send.
      "anthropic-ratelimit-tokens-limit": "0",
      "anthropic-ratelimit-tokens-remaining": "0",
      "anthropic-ratelimit-tokens-reset": new Date(Date.now() + 3_600_000).toISOString(),
    };
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
        res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
      if (req.method !== "POST" || !req.url?.endsWith("/messages")) return json(404, { type: "error", error: { type: "not_found_error", message: "Not found" } });
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
      requests.push({ body, headers: req.headers });
      if (billing) {
        return json(400, { type: "error", error: { type: "invalid_request_error", message: "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits." } });
      }
      if (limits) {
        if (Date.now() >= window.start + limits.windowMs) window = { start: Date.now(), requests: 0 };
        if (window.requests >= limits.requestsPerWindow) {
          stats.rateLimited++;
          // Whole seconds as Anthropic sends them; a window shorter than a second (tests) says its fraction.
          const left = (window.start + limits.windowMs - Date.now()) / 1000;
          const seconds = limits.windowMs < 1000 ? Math.max(0.001, left).toFixed(3) : String(Math.max(1, Math.ceil(left)));
          return json(429, { type: "error", error: { type: "rate_limit_error", message: "Number of requests has exceeded your rate limit" } }, { ...limitHeaders(), "retry-after": seconds });
        }
        window.requests++;
      }
      const inputTokens = buckets ? anthropicTokens(body) : 12;
      if (buckets) {
        const waitMs = buckets.admit(inputTokens);
        if (waitMs > 0) {
          stats.rateLimited++;
          return json(429, { type: "error", error: { type: "rate_limit_error", message: "Number of request tokens has exceeded your per-minute rate limit" } }, { ...limitHeaders(), "retry-after": String(Math.max(1, Math.ceil(waitMs / 1000))) });
        }
        buckets.spend(ANTHROPIC_OUTPUT_TOKENS);
      }
      stats.ok++;
      const answer = respond(userText(body));
      const tools = (body.tools ?? []) as { name?: string }[];
      const viaTool = tools.some((t) => t.name === "json");
      const content = viaTool
        ? [{ type: "tool_use", id: `toolu_${requests.length}`, name: "json", input: answer }]
        : [{ type: "text", text: JSON.stringify(answer) }];
      return json(
        200,
        {
          id: `msg_${requests.length}`,
          type: "message",
          role: "assistant",
          model: body.model,
          content,
          stop_reason: viaTool ? "tool_use" : "end_turn",
          stop_sequence: null,
          usage: { input_tokens: inputTokens, output_tokens: buckets ? ANTHROPIC_OUTPUT_TOKENS : 8 },
        },
        limitHeaders(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    answer: (fn) => {
      respond = fn;
    },
    limit: (next) => {
      limits = next;
      window = { start: Date.now(), requests: 0 };
    },
    limitPerMinute: (next) => {
      buckets = next ? perMinuteBuckets(next) : null;
    },
    billingError: (on) => {
      billing = on;
    },
    stats,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
