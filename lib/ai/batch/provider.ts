import "server-only";
import { createHash } from "node:crypto";
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

/**
 * The tag a submission carries to the provider so that it can be found there without its id: derived from its row's
 * key (ledger run, node, seq), the same in every process. OpenAI keeps it in the batch's metadata; every request's id
 * starts with it (Anthropic shows no metadata, only the requests' ids in the results).
 */
export function batchTag(row: { chainRunId: string; nodeId: string }, seq: number): string {
  return `fm${createHash("sha256").update(`${row.chainRunId}\n${row.nodeId}\n${seq}`).digest("hex").slice(0, 24)}`;
}

/** The OpenAI batch's metadata key that carries our tag (see submitBatch). */
export const BATCH_TAG_METADATA_KEY = "flowmail_batch";

/**
 * The SDK's batch API of the account's provider. With `tag` (OpenAI), the batch's creation (POST …/batches) carries
 * `metadata: { flowmail_batch: tag }`: the SDK's start has no option for it, so its request body is extended here,
 * on its way through the provider fetch.
 */
function batchApi(settings: AiSettings, tag?: string): Experimental_BatchV4 {
  const guarded = createProviderFetch({ maxResponseBytes: MAX_BATCH_RESULTS_BYTES });
  const fetch: typeof globalThis.fetch = tag === undefined ? guarded : (input, init) => guarded(input, withTag(input, init, tag));
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

function withTag(input: Parameters<typeof fetch>[0], init: RequestInit | undefined, tag: string): RequestInit | undefined {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  if (init?.method !== "POST" || typeof init.body !== "string" || !/\/batches$/.test(new URL(url).pathname)) return init;
  const body = JSON.parse(init.body) as Record<string, unknown>;
  body.metadata = { ...((body.metadata as Record<string, string> | undefined) ?? {}), [BATCH_TAG_METADATA_KEY]: tag };
  return { ...init, body: JSON.stringify(body) };
}

/** What the SDK needs to find a batch again: its id and the SDK's name of the provider's batch API. */
function reference(api: Experimental_BatchV4, id: string): BatchReference {
  return { version: 2, id, provider: api.provider };
}

export type BatchCall = { timeoutMs: number; signal?: AbortSignal };

/**
 * Submits one batch; answers the provider's batch id. `tag` names the batch at the provider, so that it can be found
 * again without its id (findSubmittedBatch): OpenAI keeps it in the batch's metadata; Anthropic's batches have no
 * metadata, so every request's id starts with it (the caller's ids must).
 */
export async function submitBatch(
  settings: AiSettings,
  modelId: string,
  spec: { outputs: DeclaredOutput[]; temperature?: number },
  requests: BatchItemRequest[],
  tag: string,
  call: BatchCall,
): Promise<string> {
  const api = batchApi(settings, settings.provider === "openai" ? tag : undefined);
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

/** What the provider says of a batch we may have submitted without recording its id. */
export type FoundBatch = { kind: "found"; batchId: string } | { kind: "absent" } | { kind: "unsure"; why: string };

/** How far back the provider's list is read before the row's creation (clocks disagree a little). */
const LIST_SKEW_MS = 10 * 60_000;
/** Pages of the provider's list read at most (100 batches a page). */
const LIST_MAX_PAGES = 20;

type ListedBatch = { id: string; createdAtMs: number; tag?: string; total: number; ended: boolean; resultsReadable: boolean };

/**
 * Looks for the batch a submission tagged `tag` created, among the account's batches created since `sinceMs` (the
 * provider lists the newest first):
 * - OpenAI: the batch whose metadata carries the tag — found, or surely absent;
 * - Anthropic: a batch lists no metadata and shows its requests' ids only in its results, once it has ended. The
 *   candidates are the batches created since then with as many requests, that no other row of ours holds (`known`);
 *   an ended one is ours when its first result's id carries the tag. A candidate still in progress leaves it unsure
 *   (it is looked at again until it ends, within the provider's 24 h): submitting again could make a twin.
 */
export async function findSubmittedBatch(
  settings: AiSettings,
  want: { tag: string; itemCount: number; sinceMs: number },
  known: (batchIds: string[]) => Promise<Set<string>>,
  call: BatchCall,
): Promise<FoundBatch> {
  const candidates: ListedBatch[] = [];
  let cursor: string | undefined;
  for (let page = 0; ; page++) {
    if (page === LIST_MAX_PAGES) return { kind: "unsure", why: `more than ${LIST_MAX_PAGES * 100} batches were created since` };
    const listed = await listBatches(settings, cursor, call);
    for (const batch of listed.batches) {
      if (batch.createdAtMs < want.sinceMs - LIST_SKEW_MS) continue;
      if (settings.provider === "openai") {
        if (batch.tag === want.tag) return { kind: "found", batchId: batch.id };
      } else if (batch.total === want.itemCount) candidates.push(batch);
    }
    const oldest = listed.batches.at(-1);
    if (!listed.next || !oldest || oldest.createdAtMs < want.sinceMs - LIST_SKEW_MS) break;
    cursor = listed.next;
  }
  if (settings.provider === "openai" || candidates.length === 0) return { kind: "absent" };
  const held = await known(candidates.map((c) => c.id));
  let inProgress = 0;
  for (const candidate of candidates) {
    if (held.has(candidate.id)) continue;
    if (!candidate.ended) {
      inProgress++;
      continue;
    }
    if (!candidate.resultsReadable) continue;
    if ((await firstResultId(settings, candidate.id, call))?.startsWith(`${want.tag}-`)) return { kind: "found", batchId: candidate.id };
  }
  return inProgress > 0 ? { kind: "unsure", why: `${inProgress} batch(es) of as many requests are still in progress at the provider` } : { kind: "absent" };
}

async function firstResultId(settings: AiSettings, batchId: string, call: BatchCall): Promise<string | undefined> {
  const api = batchApi(settings);
  const stream = getBatchResults({ provider: api, batch: reference(api, batchId), maxRetries: 0, timeout: { totalMs: call.timeoutMs }, abortSignal: call.signal });
  for await (const item of stream) return item.id;
  return undefined;
}

/**
 * One page of the account's batches, newest first, read through the provider fetch (the SDK's list drops the
 * metadata): OpenAI GET /v1/batches?limit=100&after=…, Anthropic GET /v1/messages/batches?limit=100&after_id=….
 */
async function listBatches(settings: AiSettings, cursor: string | undefined, call: BatchCall): Promise<{ batches: ListedBatch[]; next?: string }> {
  const openai = settings.provider === "openai";
  const base = (settings.baseUrl ?? (openai ? "https://api.openai.com/v1" : "https://api.anthropic.com/v1")).replace(/\/+$/, "");
  const url = new URL(`${base}${openai ? "/batches" : "/messages/batches"}`);
  url.searchParams.set("limit", "100");
  if (cursor) url.searchParams.set(openai ? "after" : "after_id", cursor);
  const headers: Record<string, string> = openai
    ? { authorization: `Bearer ${settings.apiKey}` }
    : { "x-api-key": settings.apiKey, "anthropic-version": "2023-06-01" };
  const signal = call.signal ? AbortSignal.any([call.signal, AbortSignal.timeout(call.timeoutMs)]) : AbortSignal.timeout(call.timeoutMs);
  const response = await createProviderFetch()(url, { headers, signal });
  const text = await response.text();
  if (!response.ok) {
    const message = (parseJson(text) as { error?: { message?: string } } | undefined)?.error?.message ?? `HTTP ${response.status}`;
    throw new APICallError({ message, url: url.href, requestBodyValues: {}, statusCode: response.status, responseBody: text });
  }
  const page = parseJson(text) as { data?: Record<string, unknown>[]; has_more?: boolean; last_id?: string | null } | undefined;
  const batches = (page?.data ?? []).map((b): ListedBatch => {
    if (openai) {
      const counts = b.request_counts as { total?: number } | undefined;
      const metadata = b.metadata as Record<string, unknown> | null | undefined;
      const tag = metadata?.[BATCH_TAG_METADATA_KEY];
      return { id: String(b.id), createdAtMs: Number(b.created_at) * 1000, tag: typeof tag === "string" ? tag : undefined, total: counts?.total ?? 0, ended: !["validating", "in_progress", "finalizing", "cancelling"].includes(String(b.status)), resultsReadable: true };
    }
    const counts = (b.request_counts ?? {}) as Record<string, number | undefined>;
    const total = ["processing", "succeeded", "errored", "canceled", "expired"].reduce((sum, k) => sum + (counts[k] ?? 0), 0);
    return { id: String(b.id), createdAtMs: Date.parse(String(b.created_at)), total, ended: b.processing_status === "ended", resultsReadable: b.processing_status === "ended" && !b.archived_at && Boolean(b.results_url) };
  });
  const next = page?.has_more && page.last_id ? page.last_id : undefined;
  return { batches, next };
}
