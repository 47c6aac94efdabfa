import type { DeclaredOutput } from "./output-schema";

/**
 * A quick token count for pacing (the limiter corrects it with the provider's real count after the call): about four
 * characters a token for the request, and a small allowance per declared output for the answer.
 */
export function approxCallTokens(system: string | undefined, prompt: string, outputs: DeclaredOutput[]): number {
  return approxTokens((system ?? "") + prompt) + 16 + outputs.length * 24;
}

export function approxTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
