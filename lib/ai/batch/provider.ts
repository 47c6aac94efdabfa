import "server-only";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import {
  APICallError,
  experimental_cancelBatch as cancelBatch,
  experimental_getBatchResults as getBatchResults,
  experimental_getBatchStatus as getBatchStatus,
  experimental_startBatch as startBatch,
  tool,
  type Experimental_BatchReference as BatchReference,
} from "ai";
import { BATCH_MODE_PROVIDERS } from "@/lib/graph/validate-ai-batch";
import { createProviderFetch } from "@/lib/net/provider-fetch";
import { sanitizeProviderMessage } from "@/lib/net/provider-message";
import { outputSchema, type DeclaredOutput } from "../output-schema";
import type { AiSettings } from "../settings";

/**
 * The providers' batch APIs through the AI SDK's batch support (`experimental_startBatch`, `…getBatchStatus`,
 * `…getBatchResults`, `…cancelBatch`): OpenAI Batch (a JSONL file uploaded to /v1/files, POST /v1/batches on the
 * Responses endpoint, GET /v1/batches/:id, the output file's content, POST /v1/batches/:id/cancel) and Anthropic
 * Message Batches (POST /v1/messages/batches, GET …/:id, the `results_url` JSONL, POST …/:id/cancel). Every request
 * goes through the provider fetch (the SSRF guard, no redirects, bounded reads) with a larger bound for the results
 * file, which is one batch's answers.
 *
 * The SDK's batch requests carry no structured-output format, so the declared outputs are asked as the input of one
 * forced tool, `answer`, whose schema they are (both providers' batch results carry tool calls), and validated here.
 */

/** OpenAI and Anthropic have a batch API; an openai-compatible server (Ollama, vLLM) has none. */
export const hasBatchApi = (provider: string) => BATCH_MODE_PROVIDERS.includes(provider);

/** Both providers bill a batch at half the standard price. */
export const BATCH_PRICE_FACTOR = 0.5;

/** The largest results file read for one batch (the node's batches hold at most BATCH_MAX_ITEMS items each). */
export const MAX_BATCH_RESULTS_BYTES = 128 * 1024 * 1024;

/** The tool whose input is the item's answer. */
const ANSWER_TOOL = "answer";

export type BatchItemRequest = { id: string; system?: string; prompt: string };

export type BatchState = {
  ended: boolean;
  /** Items the provider has finished (answered or failed) so far, when it says. */
  finished: number | null;
  rawStatus?: string;
};

export type BatchItemOutcome =
  | { id: string; ok: true; output: Record<string, unknown>; inputTokens: number; outputTokens: number }
  | { id: string; ok: false; kind: "item"; message: string; inputTokens?: number; outputTokens?: number }
  /** Cancelled or expired with its batch: not answered, not billed. */
  | { id: string; ok: false; kind: "unanswered"; message: string };

/** The SDK's batch API object (the same interface for every provider). */
type Experimental_BatchV4 = ReturnType<ReturnType<typeof createOpenAI>["experimental_batch"]>;

/** The SDK's batch API of the account's provider. */
function batchApi(settings: AiSettings): Experimental_BatchV4 {
  const fetch = createProviderFetch({ maxResponseBytes: MAX_BATCH_RESULTS_BYTES });
  const baseURL = settings.baseUrl ? { baseURL: settings.baseUrl } : {};
  switch (settings.provider) {
    case "openai":
      return createOpenAI({ apiKey: settings.apiKey, ...baseURL, fetch }).experimental_batch();
    case "anthropic":
      return createAnthropic({ apiKey: settings.apiKey, ...baseURL, fetch }).experimental_batch();
    default:
      throw new Error(`The provider ${settings.provider} has no batch API`);
  }
}

/** What the SDK needs to find a batch again: its id and the SDK's name of the provider's batch API. */
function reference(api: Experimental_BatchV4, id: string): BatchReference {
  return { version: 2, id, provider: api.provider };
}

export type BatchCall = { timeoutMs: number; signal?: AbortSignal };

/** Submits one batch; answers the provider's batch id. */
export async function submitBatch(
  settings: AiSettings,
  modelId: string,
  spec: { outputs: DeclaredOutput[]; temperature?: number },
  requests: BatchItemRequest[],
  call: BatchCall,
): Promise<string> {
  const api = batchApi(settings);
  const tools = { [ANSWER_TOOL]: tool({ description: "Record the answer: the declared output fields.", inputSchema: outputSchema(spec.outputs) }) };
  const started = await startBatch({
    provider: api,
    requests: requests.map((r) => ({
      id: r.id,
      type: "text" as const,
      model: modelId,
      system: r.system,
      prompt: r.prompt,
      temperature: spec.temperature,
      maxOutputTokens: 4096,
      tools,
      toolChoice: { type: "tool", toolName: ANSWER_TOOL } as const,
    })),
    timeout: { totalMs: call.timeoutMs },
    abortSignal: call.signal,
  });
  return started.id;
}

export async function batchState(settings: AiSettings, batchId: string, call: BatchCall): Promise<BatchState> {
  const api = batchApi(settings);
  const status = await getBatchStatus({ provider: api, batch: reference(api, batchId), maxRetries: 0, timeout: { totalMs: call.timeoutMs }, abortSignal: call.signal });
  const counts = status.requestCounts;
  return { ended: status.status !== "pending", finished: counts ? counts.completed + counts.failed : null, rawStatus: status.rawStatus };
}

export async function cancelProviderBatch(settings: AiSettings, batchId: string, call: BatchCall): Promise<void> {
  const api = batchApi(settings);
  await cancelBatch({ provider: api, batch: reference(api, batchId), timeout: { totalMs: call.timeoutMs }, abortSignal: call.signal });
}

/** The ended batch's results, one item at a time (streamed: the file is never held whole). */
export async function* batchResults(settings: AiSettings, batchId: string, outputs: DeclaredOutput[], call: BatchCall): AsyncGenerator<BatchItemOutcome> {
  const schema = outputSchema(outputs);
  const api = batchApi(settings);
  const stream = getBatchResults({ provider: api, batch: reference(api, batchId), maxRetries: 0, timeout: { totalMs: call.timeoutMs }, abortSignal: call.signal });
  for await (const item of stream) {
    if (item.type !== "text") continue;
    if (item.status === "cancelled" || item.status === "expired") {
      yield { id: item.id, ok: false, kind: "unanswered", message: item.status === "expired" ? "The provider's batch expired (24 h) before this item was answered" : "The provider's batch was cancelled before this item was answered" };
      continue;
    }
    if (item.status === "failed") {
      const code = item.error.code ? ` (${sanitizeProviderMessage(String(item.error.code), 60)})` : "";
      yield { id: item.id, ok: false, kind: "item", message: `The AI provider refused this item${code}: ${sanitizeProviderMessage(item.error.message ?? "no message")}` };
      continue;
    }
    if (item.status !== "succeeded") continue;
    const inputTokens = item.usage.inputTokens ?? 0;
    const outputTokens = item.usage.outputTokens ?? 0;
    const parsed = schema.safeParse(answerOf(item.content, item.text));
    if (parsed.success) yield { id: item.id, ok: true, output: parsed.data as Record<string, unknown>, inputTokens, outputTokens };
    else {
      const why = sanitizeProviderMessage(parsed.error.issues[0]?.message ?? "invalid JSON", 160);
      yield { id: item.id, ok: false, kind: "item", message: `The AI answer did not match the declared outputs (${why})`, inputTokens, outputTokens };
    }
  }
}

/** The `answer` tool call's input; else the text, when it is a JSON object. */
function answerOf(content: readonly { type: string }[], text: string): unknown {
  for (const part of content) {
    if (part.type !== "tool-call") continue;
    const call = part as { toolName?: string; input?: unknown };
    if (call.toolName !== ANSWER_TOOL) continue;
    return typeof call.input === "string" ? parseJson(call.input) : call.input;
  }
  return parseJson(text);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** How a failed batch request ended: `transient` (429, 5xx, network, timeout) is tried again at the next poll. */
export function classifyBatchError(error: unknown): { kind: "transient" | "quota" | "refused"; message: string } {
  if (APICallError.isInstance(error)) {
    const status = error.statusCode ?? null;
    const message = `The AI provider's batch API answered with an error${status ? ` (HTTP ${status})` : ""}: ${sanitizeProviderMessage(error.message)}`;
    if (status === 402 || /insufficient_quota|billing|credit balance is too low|exceeded your current quota/i.test(`${error.message} ${JSON.stringify(error.data ?? "")}`)) {
      return { kind: "quota", message };
    }
    const transient = status === null ? error.isRetryable : status === 429 || status === 408 || status === 409 || status >= 500;
    return { kind: transient ? "transient" : "refused", message };
  }
  const last = error instanceof Error ? error : new Error(String(error));
  const message = `The AI provider's batch API could not be reached: ${sanitizeProviderMessage(last.message)}`;
  if (last.name === "TimeoutError" || last.name === "AbortError" || last.name === "TypeError") return { kind: "transient", message };
  const code = (last as { code?: unknown; cause?: { code?: unknown } }).code ?? (last as { cause?: { code?: unknown } }).cause?.code;
  if (typeof code === "string" && /^(ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|UND_ERR_\w+|EAI_AGAIN)$/.test(code)) return { kind: "transient", message };
  return { kind: "refused", message: `The AI provider's batch API failed: ${sanitizeProviderMessage(last.message)}` };
}
