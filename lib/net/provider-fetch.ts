import "server-only";
import { createGuardedFetch } from "./guarded-fetch";
import { sanitizeProviderMessage } from "./provider-message";
import type { SafeTargetOptions } from "./ssrf";

// The `fetch` every AI provider's SDK client is given (openai, anthropic, openai-compatible, with or without a base
// URL). On top of the guarded fetch (each request checked against the SSRF rules at the time it is made and connected
// to the checked addresses only; redirects returned, never followed) it bounds what comes back:
// - an answer is read up to a byte limit; a larger one is cut off and answered as a refusal naming the limit;
// - an error answer (any status outside 2xx, redirects included) reaches the SDK as a short JSON error whose message
//   is the provider's own, cleaned and length-capped: the SDK copies error bodies into its errors, which reach the
//   server log and, through the node's error, the run log.

/** The largest AI answer read: a structured answer is a few kilobytes; a model's whole context is far below this. */
export const MAX_AI_RESPONSE_BYTES = 4 * 1024 * 1024;
/** How much of an error answer is read to find its message. */
const MAX_ERROR_BODY_BYTES = 16 * 1024;

export type ProviderFetchOptions = SafeTargetOptions & { maxResponseBytes?: number };

export function createProviderFetch(opts: ProviderFetchOptions = {}): typeof fetch {
  const guarded = createGuardedFetch(opts);
  const maxBytes = opts.maxResponseBytes ?? MAX_AI_RESPONSE_BYTES;
  return async (input, init) => {
    const response = await guarded(input, init);
    if (response.status < 200 || response.status > 299) return cleanErrorResponse(response);
    if (!response.body) return response;
    if ((response.headers.get("content-type") ?? "").includes("text/event-stream")) return cappedStream(response, maxBytes);
    const { bytes, truncated } = await readUpTo(response.body, maxBytes);
    if (truncated) return tooLargeResponse(response, maxBytes);
    return new Response(bytes, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

const mib = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;

/** The body's first `maxBytes` bytes; `truncated` (and the connection closed) when it had more. */
async function readUpTo(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<{ bytes: Uint8Array<ArrayBuffer>; truncated: boolean }> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - size));
      size = maxBytes;
      truncated = true;
      // Stop reading: a huge or endless answer must not fill memory.
      await reader.cancel().catch(() => {});
      break;
    }
    size += value.byteLength;
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { bytes: out, truncated };
}

/**
 * A too-large answer becomes a 413 refusal (not retried by the SDKs, which retry 408, 409, 429 and 5xx), shaped
 * like OpenAI's and Anthropic's error bodies so either SDK reads its message.
 */
function tooLargeResponse(response: Response, maxBytes: number): Response {
  const message = `The AI provider's answer was larger than ${mib(maxBytes)}, the limit for one answer; nothing past the limit was read`;
  return errorResponse(413, "Content Too Large", response.headers, { type: "response_too_large", message });
}

async function cleanErrorResponse(response: Response): Promise<Response> {
  const text = response.body ? new TextDecoder().decode((await readUpTo(response.body, MAX_ERROR_BODY_BYTES)).bytes) : "";
  if (response.status >= 300 && response.status < 400) {
    const message = `The AI provider answered with a redirect (HTTP ${response.status}); redirects are not followed: set the base URL to the address that answers`;
    return errorResponse(response.status, response.statusText, response.headers, { type: "redirect", message });
  }
  return errorResponse(response.status, response.statusText, response.headers, errorFields(text));
}

/** OpenAI's `{ error: { message, type, code } }`, Anthropic's `{ type: "error", error: { type, message } }`, or text. */
function errorFields(text: string): { type: string; code?: string; message: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { type: "api_error", message: sanitizeProviderMessage(messageOfCutJson(text) ?? text) };
  }
  const inner = (parsed as { error?: unknown } | null)?.error;
  const record = inner !== null && typeof inner === "object" ? (inner as Record<string, unknown>) : {};
  const message = typeof inner === "string" ? inner : typeof record.message === "string" ? record.message : text;
  const word = (value: unknown) => (typeof value === "string" || typeof value === "number" ? String(value).replace(/[^\w.-]/g, "").slice(0, 60) : "");
  const code = word(record.code);
  return { type: word(record.type) || "api_error", ...(code ? { code } : {}), message: sanitizeProviderMessage(message) };
}

/** The `"message"` string of a JSON error body cut at the read limit, unescaped; undefined when there is none. */
function messageOfCutJson(text: string): string | undefined {
  const match = /"message"\s*:\s*"((?:[^"\\]|\\.)*)/.exec(text);
  if (!match) return undefined;
  const escaped = match[1].replace(/\\u?[0-9a-fA-F]{0,3}$|\\$/, "");
  try {
    return JSON.parse(`"${escaped}"`) as string;
  } catch {
    return undefined;
  }
}

const DROPPED_HEADERS = ["content-length", "content-type", "content-encoding", "transfer-encoding"];

function errorResponse(status: number, statusText: string, original: Headers, error: { type: string; code?: string; message: string }): Response {
  const headers = new Headers(original);
  for (const name of DROPPED_HEADERS) headers.delete(name);
  headers.set("content-type", "application/json");
  return new Response(JSON.stringify({ type: "error", error }), { status, statusText, headers });
}

/** An event stream passes through as it comes, ended with an error once it has carried more than `maxBytes`. */
function cappedStream(response: Response, maxBytes: number): Response {
  let size = 0;
  const capped = response.body!.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.byteLength;
        if (size > maxBytes) {
          controller.error(new Error(`The AI provider's answer was larger than ${mib(maxBytes)}, the limit for one answer`));
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
  return new Response(capped, { status: response.status, statusText: response.statusText, headers: response.headers });
}
