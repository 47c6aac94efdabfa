import { describe, expect, it } from "vitest";
import { costOf, pricesFor, tablePrice } from "./prices";

describe("the price table", () => {
  it("matches a model exactly or by its dated or -latest name", () => {
    expect(tablePrice("openai", "gpt-4o-mini")).toEqual({ input: 0.15, output: 0.6 });
    expect(tablePrice("openai", "gpt-4o-mini-2024-07-18")).toEqual({ input: 0.15, output: 0.6 });
    expect(tablePrice("openai", "gpt-4o-2024-08-06")).toEqual({ input: 2.5, output: 10 });
    expect(tablePrice("anthropic", "claude-3-5-haiku-latest")).toEqual({ input: 0.8, output: 4 });
  });

  it("knows no price for an unknown model or an openai-compatible server: null, never a guess", () => {
    expect(tablePrice("openai", "gpt-4o-minimal")).toBeNull();
    expect(tablePrice("openai-compatible", "gpt-4o-mini")).toBeNull();
    expect(costOf(pricesFor({ provider: "openai-compatible" }, "llama3"), 1000, 100)).toBeNull();
  });

  it("lets the account's prices override the table", () => {
    expect(pricesFor({ provider: "openai", inputPricePerMillion: 1, outputPricePerMillion: 2 }, "gpt-4o-mini")).toEqual({ input: 1, output: 2 });
    expect(costOf(pricesFor({ provider: "openai-compatible", inputPricePerMillion: 1, outputPricePerMillion: 2 }, "x"), 1_000_000, 500_000)).toBe(2);
    expect(costOf(pricesFor({ provider: "openai" }, "gpt-4o-mini"), 1000, 1000)).toBeCloseTo(0.00075, 10);
  });
});
