import "server-only";
import { APICallError, generateText, NoObjectGeneratedError, Output, RetryError, type LanguageModel } from "ai";
import { sanitizeProviderMessage } from "@/lib/net/provider-message";
import { aiCallPolicy } from "./generate";
import { languageModel } from "./model";
import { outputSchema, type DeclaredOutput } from "./output-schema";
import type { AiSettings } from "./settings";

/** One model call of an item: the request, and the signal that interrupts it (a cancel). */
export type ModelCall = {
  settings: AiSettings;
  modelId: string;
  system?: string;
  prompt: string;
  temperature?: number;
  outputs: DeclaredOutput[];
  signal?: AbortSignal;
};

export type ModelUsage = { inputTokens: number; outputTokens: number };

export type ModelAnswer = { ok: true; output: Record<string, unknown>; usage: ModelUsage; headers: Record<string, string> };

/**
 * Why a call failed, as the pacing needs it:
 * - `transient`: 429, 5xx, a timeout or a dropped connection — waited out and asked again;
 * - `item`: any other refusal (bad request, context too long, an answer that does not match the outputs) — the item fails;
 * - `quota`: the provider's quota or billing says no — the node fails at once;
 * - `aborted`: the caller's signal interrupted it (a cancel).
 */
export type ModelFailure = {
  ok: false;
  kind: "transient" | "item" | "quota" | "aborted";
  message: string;
  status: number | null;
  headers: Record<string, string>;
  usage?: ModelUsage;
};

/**
 * One structured-output call through the AI SDK with no retries of its own (the pacing is ours: lib/ai/limiter.ts and
 * lib/nodes/ai/run-items.ts): the declared outputs become the JSON schema, the answer is validated against it. Never
 * throws for a provider's answer: it says how the call ended, with the response headers the limiter reads.
 */
export async function callModel(call: ModelCall): Promise<ModelAnswer | ModelFailure> {
  const timeoutMs = aiCallPolicy.timeoutMs;
  const { signal, end } = callSignal(call.signal, timeoutMs);
  try {
    const result = await generateText({
      model: modelFor(call.settings, call.modelId),
      system: call.system,
      prompt: call.prompt,
      temperature: call.temperature,
      output: outputFor(call.outputs),
      maxRetries: 0,
      abortSignal: signal,
      // Declared `array`/`object` outputs have open element types, which OpenAI's strict mode refuses.
      providerOptions: { openai: { strictJsonSchema: false } },
    });
    return {
      ok: true,
      output: result.output as Record<string, unknown>,
      usage: { inputTokens: result.usage.inputTokens ?? 0, outputTokens: result.usage.outputTokens ?? 0 },
      headers: lowerKeys(result.response?.headers),
    };
  } catch (error) {
    if (call.signal?.aborted) return { ok: false, kind: "aborted", message: "Cancelled", status: null, headers: {} };
    return classify(error, timeoutMs);
  } finally {
    end();
  }
}

/**
 * The call's signal: aborted by the caller's signal (with its reason) or after `timeoutMs` (a TimeoutError, as
 * AbortSignal.timeout's), and let go of when the call ends: its timer cleared and its listener on the caller's
 * signal removed. AbortSignal.timeout and AbortSignal.any did the same but lived for the whole timeout (their timer,
 * the any-signal, the SDK's Request's signal listening to it), and the caller's signal is the node's, alive for the
 * whole node: at hundreds of calls a second that was tens of thousands of dead calls' objects, old enough to be
 * promoted, filling the old generation until a full collection.
 */
function callSignal(parent: AbortSignal | undefined, timeoutMs: number): { signal: AbortSignal; end: () => void } {
  const controller = new AbortController();
  const onAbort = () => controller.abort(parent!.reason);
  const timer = setTimeout(() => controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")), timeoutMs);
  timer.unref();
  if (parent?.aborted) onAbort();
  else parent?.addEventListener("abort", onAbort, { once: true });
  return {
    signal: controller.signal,
    end: () => {
      clearTimeout(timer);
      parent?.removeEventListener("abort", onAbort);
    },
  };
}

/**
 * An AI node makes thousands of calls with one account's settings and one node's declared outputs: the SDK's provider
 * and model, and the output (its zod schema and the JSON schema made from it), are built once for those objects, not
 * once per call. Keyed by the objects themselves, so they go with them.
 */
const models = new WeakMap<AiSettings, Map<string, LanguageModel>>();
const outputs = new WeakMap<DeclaredOutput[], ReturnType<typeof Output.object>>();

function modelFor(settings: AiSettings, modelId: string): LanguageModel {
  let byId = models.get(settings);
  if (!byId) models.set(settings, (byId = new Map()));
  let model = byId.get(modelId);
  if (!model) byId.set(modelId, (model = languageModel(settings, modelId)));
  return model;
}

function outputFor(declared: DeclaredOutput[]) {
  let output = outputs.get(declared);
  if (!output) outputs.set(declared, (output = Output.object({ schema: outputSchema(declared) })));
  return output;
}

function classify(error: unknown, timeoutMs: number): ModelFailure {
  const last = RetryError.isInstance(error) ? error.lastError : error;
  if (isTimeout(last)) {
    return { ok: false, kind: "transient", message: `The AI provider did not answer within ${timeoutMs / 1000} s`, status: null, headers: {} };
  }
  if (NoObjectGeneratedError.isInstance(last)) {
    const why = last.cause instanceof Error ? sanitizeProviderMessage(last.cause.message.split("\n")[0], 160) : "invalid JSON";
    const usage = last.usage ? { inputTokens: last.usage.inputTokens ?? 0, outputTokens: last.usage.outputTokens ?? 0 } : undefined;
    return { ok: false, kind: "item", message: `The AI answer did not match the declared outputs (${why})`, status: null, headers: lowerKeys(last.response?.headers), usage };
  }
  if (APICallError.isInstance(last)) {
    const status = last.statusCode ?? null;
    const headers = lowerKeys(last.responseHeaders);
    const code = providerCode(last.data);
    const label = status ? ` (HTTP ${status}${code ? `, ${code}` : ""})` : code ? ` (${code})` : "";
    const message = `The AI provider answered with an error${label}: ${sanitizeProviderMessage(last.message)}`;
    if (isQuotaError(status, code, last.message)) return { ok: false, kind: "quota", message, status, headers };
    const transient = status === null ? last.isRetryable : status === 429 || status === 408 || status === 409 || status >= 500;
    return { ok: false, kind: transient ? "transient" : "item", message, status, headers };
  }
  const name = last instanceof Error && last.name && last.name !== "Error" ? `${sanitizeProviderMessage(last.name, 60)}: ` : "";
  const message = `The AI call failed: ${name}${sanitizeProviderMessage(last instanceof Error ? last.message : String(last))}`;
  // fetch's own failures (refused, reset, dropped mid-answer) are a TypeError or carry a system error code.
  return { ok: false, kind: isNetworkError(last) ? "transient" : "item", message, status: null, headers: {} };
}

/** OpenAI's `insufficient_quota`; Anthropic's billing errors (402, `billing_error`, "credit balance is too low"). */
function isQuotaError(status: number | null, code: string | null, message: string): boolean {
  if (code === "insufficient_quota" || code === "billing_error" || code === "billing_hard_limit_reached") return true;
  if (status === 402) return true;
  return /credit balance is too low|exceeded your current quota/i.test(message);
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

function isNetworkError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === "TypeError" && /fetch failed|network|terminated|socket/i.test(error.message)) return true;
  const code = (error as { code?: unknown; cause?: { code?: unknown } }).code ?? (error as { cause?: { code?: unknown } }).cause?.code;
  return typeof code === "string" && /^(ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|UND_ERR_\w+|EAI_AGAIN)$/.test(code);
}

function lowerKeys(headers: Record<string, string | undefined> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) if (typeof v === "string") out[k.toLowerCase()] = v;
  return out;
}
