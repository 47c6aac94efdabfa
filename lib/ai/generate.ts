import "server-only";
import { APICallError, generateText, NoObjectGeneratedError, Output, RetryError } from "ai";
import { sanitizeProviderMessage } from "@/lib/net/provider-message";
import { observeAiCall } from "@/lib/observability/ai";
import { languageModel } from "./model";
import { outputSchema, type DeclaredOutput } from "./output-schema";
import type { AiSettings } from "./settings";

/**
 * 60 s per call (the contract); retries of transient provider errors (429, 5xx, network) use the SDK's
 * exponential backoff. Mutable so tests can shorten the timeout.
 */
export const aiCallPolicy = { timeoutMs: 60_000, maxRetries: 2 };

export class AiCallError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "AiCallError";
  }
}

export type StructuredCall = {
  settings: AiSettings;
  modelId: string;
  system?: string;
  prompt: string;
  temperature?: number;
  outputs: DeclaredOutput[];
  timeoutMs?: number;
};

/** One structured-output call: the declared outputs become the JSON schema, and the answer is validated against it. */
export async function generateStructured(call: StructuredCall): Promise<Record<string, unknown>> {
  const timeoutMs = call.timeoutMs ?? aiCallPolicy.timeoutMs;
  try {
    const result = await observeAiCall({ provider: call.settings.provider, model: call.modelId }, () => generateText({
      model: languageModel(call.settings, call.modelId),
      system: call.system,
      prompt: call.prompt,
      temperature: call.temperature,
      output: Output.object({ schema: outputSchema(call.outputs) }),
      maxRetries: aiCallPolicy.maxRetries,
      abortSignal: AbortSignal.timeout(timeoutMs),
      // Declared `array`/`object` outputs have open element types, which OpenAI's strict mode refuses.
      providerOptions: { openai: { strictJsonSchema: false } },
    }));
    return result.output as Record<string, unknown>;
  } catch (error) {
    throw new AiCallError(describeAiError(error, timeoutMs), { cause: error });
  }
}

function describeAiError(error: unknown, timeoutMs: number): string {
  const limit = `${timeoutMs / 1000} s`;
  if (isTimeout(error)) return `The AI provider did not answer within ${limit}: try again later or choose a faster model`;
  if (NoObjectGeneratedError.isInstance(error)) {
    const why = error.cause instanceof Error ? sanitizeProviderMessage(error.cause.message.split("\n")[0], 160) : "invalid JSON";
    return `The AI answer did not match the declared outputs (${why})`;
  }
  const last = RetryError.isInstance(error) ? error.lastError : error;
  if (isTimeout(last)) return `The AI provider did not answer within ${limit}: try again later or choose a faster model`;
  // The provider's own text may carry its file paths, SQL or an HTML error page: people see its code and a bounded,
  // cleaned message; the full error goes to the server log through the cause.
  if (APICallError.isInstance(last)) {
    const code = providerCode(last.data);
    const status = last.statusCode ? ` (HTTP ${last.statusCode}${code ? `, ${code}` : ""})` : code ? ` (${code})` : "";
    const attempts = RetryError.isInstance(error) ? ` after ${error.errors.length} attempts` : "";
    return `The AI provider answered with an error${status}${attempts}: ${sanitizeProviderMessage(last.message)}`;
  }
  const name = last instanceof Error && last.name && last.name !== "Error" ? `${sanitizeProviderMessage(last.name, 60)}: ` : "";
  return `The AI call failed: ${name}${sanitizeProviderMessage(last instanceof Error ? last.message : String(last))}`;
}

/** OpenAI's and Anthropic's error bodies name the error: `{ error: { code | type } }`. */
function providerCode(data: unknown): string | null {
  const inner = (data as { error?: { code?: unknown; type?: unknown } } | undefined)?.error;
  const code = typeof inner?.code === "string" ? inner.code : typeof inner?.type === "string" ? inner.type : null;
  return code && /^[\w.-]{1,60}$/.test(code) ? code : null;
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
}
