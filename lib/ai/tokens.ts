import { countTokens } from "gpt-tokenizer";
import { z } from "zod";
import { outputSchema, type DeclaredOutput } from "./output-schema";

/**
 * A quick token count for pacing (the limiter corrects it with the provider's real count after the call): about four
 * characters a token for the request, and a small allowance per declared output for the answer.
 */
export function approxCallTokens(system: string | undefined, prompt: string, outputs: DeclaredOutput[]): number {
  return approxTokens((system ?? "") + prompt) + 8 + outputs.length * 12;
}

export function approxTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** OpenAI models tokenized with o200k_base (gpt-tokenizer's default encoding): counted exactly. */
const O200K_MODELS = /^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4|chatgpt-4o)/;

/**
 * The input tokens of one call for an estimate: system and prompt as chat messages (OpenAI's framing: 3 tokens a
 * message and 3 to prime the answer) plus the JSON schema of the declared outputs. Exact for OpenAI's o200k models
 * (gpt-tokenizer); for any other model the same count is an approximation (`exact: false`): their tokenizers are not
 * public or differ.
 */
export function countCallTokens(provider: string, modelId: string, system: string | undefined, prompt: string, outputs: DeclaredOutput[]): { tokens: number; exact: boolean } {
  const messages = (system ? 2 : 1) * 3 + 3;
  const tokens = countSame(system ?? "") + countTokens(prompt) + schemaTokens(outputs) + messages;
  return { tokens, exact: provider === "openai" && O200K_MODELS.test(modelId) };
}

// An estimate counts the same declared outputs and, most often, the same system text for every item of a node:
// counted once (the JSON schema of the outputs took most of the time of a 100,000-item estimate).
const schemaCounts = new Map<string, number>();
let lastSystem = { text: "", tokens: 0 };

function schemaTokens(outputs: DeclaredOutput[]): number {
  const key = JSON.stringify(outputs);
  let tokens = schemaCounts.get(key);
  if (tokens === undefined) {
    tokens = countTokens(JSON.stringify(z.toJSONSchema(outputSchema(outputs))));
    if (schemaCounts.size >= 100) schemaCounts.clear();
    schemaCounts.set(key, tokens);
  }
  return tokens;
}

function countSame(text: string): number {
  if (text !== lastSystem.text) lastSystem = { text, tokens: countTokens(text) };
  return lastSystem.tokens;
}
