/**
 * What a model provider's answer says about its rate limit, read from its headers:
 * - OpenAI: `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` (resets as durations: "1s", "6m0s", "20ms");
 * - Anthropic: `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}` (resets as
 *   RFC 3339 instants);
 * - `retry-after-ms` (milliseconds) and `retry-after` (seconds or an HTTP date), of any length.
 * A header that is missing or nonsensical (not a number, negative, a limit of 0 or less, a reset in the past) is
 * ignored: it never holds the limiter.
 */
export type RateFeedback = {
  /** Nobody should call for this long (a 429's retry-after, or a window with nothing left until its reset). */
  holdMs?: number;
  /** Spacing the provider's window allows from now on: its reset divided by what remains of it. */
  spacingMs?: number;
};

const FAMILIES_OPENAI = ["requests", "tokens"];
const FAMILIES_ANTHROPIC = ["requests", "tokens", "input-tokens", "output-tokens"];

export function readRateHeaders(headers: Record<string, string>, status: number | null, now = Date.now()): RateFeedback {
  const windows: { remaining: number; resetMs: number }[] = [];
  for (const family of FAMILIES_OPENAI) {
    const w = window(headers[`x-ratelimit-limit-${family}`], headers[`x-ratelimit-remaining-${family}`], parseDuration(headers[`x-ratelimit-reset-${family}`]));
    if (w) windows.push(w);
  }
  for (const family of FAMILIES_ANTHROPIC) {
    const reset = parseInstant(headers[`anthropic-ratelimit-${family}-reset`], now);
    const w = window(headers[`anthropic-ratelimit-${family}-limit`], headers[`anthropic-ratelimit-${family}-remaining`], reset);
    if (w) windows.push(w);
  }
  const feedback: RateFeedback = {};
  const exhausted = windows.filter((w) => w.remaining === 0).map((w) => w.resetMs);
  if (exhausted.length) feedback.holdMs = Math.max(...exhausted);
  if (status === 429) {
    const retry = retryAfterMs(headers, now);
    if (retry !== undefined) feedback.holdMs = Math.max(feedback.holdMs ?? 0, retry);
  }
  const spacing = windows.filter((w) => w.remaining > 0).map((w) => w.resetMs / w.remaining);
  if (spacing.length) feedback.spacingMs = Math.max(...spacing);
  return feedback;
}

function window(limitText: string | undefined, remainingText: string | undefined, resetMs: number | undefined) {
  if (remainingText === undefined || resetMs === undefined) return undefined;
  const remaining = Number(remainingText);
  if (!Number.isFinite(remaining) || remaining < 0) return undefined;
  if (limitText !== undefined) {
    const limit = Number(limitText);
    if (!Number.isFinite(limit) || limit <= 0 || remaining > limit) return undefined;
  }
  return { remaining: Math.floor(remaining), resetMs };
}

/** retry-after-ms, else retry-after (delta seconds or an HTTP date); undefined when neither makes sense. */
export function retryAfterMs(headers: Record<string, string>, now = Date.now()): number | undefined {
  const ms = Number(headers["retry-after-ms"]);
  if (headers["retry-after-ms"] !== undefined && Number.isFinite(ms) && ms >= 0) return ms;
  const text = headers["retry-after"]?.trim();
  if (!text) return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isFinite(at) && at > now ? at - now : undefined;
}

/** OpenAI's durations: "1s", "6m0s", "1h2m3.5s", "20ms", "0.5s". Undefined when malformed. */
export function parseDuration(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
  let total = 0;
  let consumed = 0;
  for (let m = re.exec(trimmed); m; m = re.exec(trimmed)) {
    const n = Number(m[1]);
    total += m[2] === "h" ? n * 3_600_000 : m[2] === "m" ? n * 60_000 : m[2] === "s" ? n * 1000 : n;
    consumed += m[0].length;
  }
  return consumed === trimmed.length && consumed > 0 ? total : undefined;
}

function parseInstant(text: string | undefined, now: number): number | undefined {
  if (!text) return undefined;
  const at = Date.parse(text);
  if (!Number.isFinite(at)) return undefined;
  return at >= now ? at - now : undefined;
}
