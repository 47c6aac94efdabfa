/**
 * List prices of well-known models in USD per million tokens (input, output), as their vendors published them on
 * PRICES_DATE (standard tier, no batch or cache discounts). A model id matches an entry exactly or with a version suffix
 * ("gpt-4o-mini-2024-07-18", "claude-3-5-haiku-latest"). A model not listed, or any
 * model of an openai-compatible server, has no price: its cost is null unless the account sets its own prices
 * (PUT /api/account/ai-provider), never a guess. docs/ai.md shows this table.
 */
export const PRICES_DATE = "2025-08-01";

export const MODEL_PRICES: Record<"openai" | "anthropic", Record<string, { input: number; output: number }>> = {
  openai: {
    "gpt-5": { input: 1.25, output: 10 },
    "gpt-5-mini": { input: 0.25, output: 2 },
    "gpt-5-nano": { input: 0.05, output: 0.4 },
    "gpt-4.1": { input: 2, output: 8 },
    "gpt-4.1-mini": { input: 0.4, output: 1.6 },
    "gpt-4.1-nano": { input: 0.1, output: 0.4 },
    "gpt-4o": { input: 2.5, output: 10 },
    "gpt-4o-mini": { input: 0.15, output: 0.6 },
    "o3": { input: 2, output: 8 },
    "o3-mini": { input: 1.1, output: 4.4 },
    "o4-mini": { input: 1.1, output: 4.4 },
  },
  anthropic: {
    "claude-opus-4-1": { input: 15, output: 75 },
    "claude-opus-4": { input: 15, output: 75 },
    "claude-sonnet-4": { input: 3, output: 15 },
    "claude-3-7-sonnet": { input: 3, output: 15 },
    "claude-3-5-sonnet": { input: 3, output: 15 },
    "claude-3-5-haiku": { input: 0.8, output: 4 },
    "claude-3-opus": { input: 15, output: 75 },
    "claude-3-haiku": { input: 0.25, output: 1.25 },
  },
};

export type Prices = { input: number | null; output: number | null };

/** A dated or moving version of a listed model: "-2024-07-18", "-20241022", "-latest", "-0613". */
const VERSION_SUFFIX = /^-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|latest)$/;

/** The table's price of a model, or null. */
export function tablePrice(provider: string, modelId: string): { input: number; output: number } | null {
  if (provider !== "openai" && provider !== "anthropic") return null;
  const table = MODEL_PRICES[provider];
  let best: string | null = null; // at most one entry matches: a suffix is a version, never another model's name
  for (const name of Object.keys(table)) {
    if (modelId === name || (modelId.startsWith(name) && VERSION_SUFFIX.test(modelId.slice(name.length)))) best = name;
  }
  return best ? table[best] : null;
}

/** The prices a call is costed at: the account's where set, else the table's; each null when neither knows it. */
export function pricesFor(settings: { provider: string; inputPricePerMillion?: number | null; outputPricePerMillion?: number | null }, modelId: string): Prices {
  const table = tablePrice(settings.provider, modelId);
  return {
    input: settings.inputPricePerMillion ?? table?.input ?? null,
    output: settings.outputPricePerMillion ?? table?.output ?? null,
  };
}

/** USD for a call's tokens, or null when a price it needs is unknown. */
export function costOf(prices: Prices, inputTokens: number, outputTokens: number): number | null {
  if (prices.input === null || (outputTokens > 0 && prices.output === null)) return null;
  return (inputTokens * prices.input + outputTokens * (prices.output ?? 0)) / 1_000_000;
}
