/*
 * AI model calls, observed: an `ai.call` span per call (provider, model, tokens) and the AI calls, tokens and cost
 * metrics. The AI code wraps each model call: `await observeAiCall({ provider, model }, () => generateText({ … }))`.
 */
import { metrics, type AiCallStatus } from "./metrics";
import { withSpan } from "./tracing";

type Usage = { inputTokens?: number; outputTokens?: number; promptTokens?: number; completionTokens?: number };

function usageOf(result: unknown): { input?: number; output?: number } {
  const usage = (result as { usage?: Usage; totalUsage?: Usage } | null)?.totalUsage ?? (result as { usage?: Usage } | null)?.usage;
  if (!usage) return {};
  return { input: usage.inputTokens ?? usage.promptTokens, output: usage.outputTokens ?? usage.completionTokens };
}

function isTimeout(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const name = (e as { name?: string }).name;
    if (name === "TimeoutError" || name === "AbortError") return true;
  }
  return false;
}

/**
 * One model call, observed. `result.usage` (the AI SDK's answer) gives the token counts; `costUsd`, when the caller
 * knows the model's prices, turns them into the cost metric.
 */
export async function observeAiCall<T>(
  call: { provider: string; model: string; costUsd?: (tokens: { input?: number; output?: number }) => number | undefined },
  fn: () => Promise<T>,
): Promise<T> {
  return withSpan("ai.call", { "gen_ai.system": call.provider, "gen_ai.request.model": call.model }, async (span) => {
    let status: AiCallStatus = "ok";
    try {
      const result = await fn();
      const tokens = usageOf(result);
      metrics.aiTokens("input", tokens.input);
      metrics.aiTokens("output", tokens.output);
      metrics.aiCost(call.costUsd?.(tokens));
      if (tokens.input !== undefined) span?.setAttribute("gen_ai.usage.input_tokens", tokens.input);
      if (tokens.output !== undefined) span?.setAttribute("gen_ai.usage.output_tokens", tokens.output);
      return result;
    } catch (error) {
      status = isTimeout(error) ? "timeout" : "error";
      throw error;
    } finally {
      metrics.aiCall(call.provider, status);
    }
  });
}
