import { describe, expect, it } from "vitest";
import { parseDuration, readRateHeaders, retryAfterMs } from "./rate-headers";

const NOW = Date.UTC(2026, 10, 27, 20, 0, 0);

describe("provider rate-limit headers", () => {
  it("reads OpenAI's durations", () => {
    expect([parseDuration("1s"), parseDuration("6m0s"), parseDuration("1h2m3.5s"), parseDuration("20ms"), parseDuration("0.5s")]).toEqual([1000, 360_000, 3_723_500, 20, 500]);
    expect([parseDuration("soon"), parseDuration("5x"), parseDuration("")]).toEqual([undefined, undefined, undefined]);
  });

  it("holds until the reset when a window has nothing left, and spaces calls by what remains", () => {
    const openai = { "x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1.5s", "x-ratelimit-limit-tokens": "1000", "x-ratelimit-remaining-tokens": "500", "x-ratelimit-reset-tokens": "10s" };
    expect(readRateHeaders(openai, 200, NOW)).toEqual({ holdMs: 1500, spacingMs: 20 });
    const anthropic = {
      "anthropic-ratelimit-requests-limit": "50",
      "anthropic-ratelimit-requests-remaining": "10",
      "anthropic-ratelimit-requests-reset": new Date(NOW + 5000).toISOString(),
      "anthropic-ratelimit-output-tokens-limit": "8000",
      "anthropic-ratelimit-output-tokens-remaining": "0",
      "anthropic-ratelimit-output-tokens-reset": new Date(NOW + 30_000).toISOString(),
    };
    expect(readRateHeaders(anthropic, 200, NOW)).toEqual({ holdMs: 30_000, spacingMs: 500 });
  });

  it("takes retry-after-ms or retry-after of any length on a 429", () => {
    expect(readRateHeaders({ "retry-after-ms": "250" }, 429, NOW)).toEqual({ holdMs: 250 });
    expect(readRateHeaders({ "retry-after": "600" }, 429, NOW)).toEqual({ holdMs: 600_000 });
    expect(retryAfterMs({ "retry-after": new Date(NOW + 90_000).toUTCString() }, NOW)).toBe(90_000);
    expect(readRateHeaders({ "retry-after": "600" }, 200, NOW)).toEqual({});
  });

  it("ignores missing and nonsensical headers: never a stall", () => {
    expect(readRateHeaders({}, 429, NOW)).toEqual({});
    expect(readRateHeaders({ "x-ratelimit-limit-requests": "0", "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1s" }, 200, NOW)).toEqual({});
    expect(readRateHeaders({ "x-ratelimit-limit-requests": "-1", "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1s" }, 200, NOW)).toEqual({});
    expect(readRateHeaders({ "x-ratelimit-remaining-requests": "-1", "x-ratelimit-reset-requests": "1s" }, 200, NOW)).toEqual({});
    expect(readRateHeaders({ "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "never" }, 200, NOW)).toEqual({});
    expect(readRateHeaders({ "anthropic-ratelimit-requests-remaining": "0", "anthropic-ratelimit-requests-reset": new Date(NOW - 1000).toISOString() }, 200, NOW)).toEqual({});
    expect(readRateHeaders({ "retry-after": "-5", "retry-after-ms": "abc" }, 429, NOW)).toEqual({});
  });
});
