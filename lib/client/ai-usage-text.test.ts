import { describe, expect, it } from "vitest";
import { formatCalls, formatEstimatedUsd, formatUsage } from "./ai-usage-text";

describe("model usage as words", () => {
  it("counts calls, one and many", () => {
    expect(formatCalls(1)).toBe("1 call");
    expect(formatCalls(0)).toBe("0 calls");
    expect(formatCalls(12_000)).toBe("12,000 calls");
  });

  it("writes calls, tokens and cost in one phrase", () => {
    expect(formatUsage({ calls: 12, inputTokens: 1234, outputTokens: 56, costUsd: 0.0012 })).toBe("12 calls (1,234 tokens in, 56 out, $0.0012)");
    expect(formatUsage({ calls: 1, inputTokens: 9, outputTokens: 3, costUsd: null })).toBe("1 call (9 tokens in, 3 out, unknown)");
  });

  it("marks an estimated cost as approximate, or unknown without a price", () => {
    expect(formatEstimatedUsd(12.4)).toBe("≈ $12.40");
    expect(formatEstimatedUsd(0)).toBe("≈ $0.00");
    expect(formatEstimatedUsd(null)).toBe("unknown");
  });
});
