import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { resetConfig } from "@/lib/config";

/**
 * A local stand-in for the Resend API, for tests that drive the real `resend` SDK.
 *
 *   const resend = await startFakeResend();
 *   useResendTransport(resend.url);   // the app now sends through the Resend SDK to the fake
 *   … code under test sends email …
 *   resend.emails()          // every email delivered, oldest first (one per recipient list entry of a batch)
 *   resend.emailsTo("a@x")   // those addressed to one recipient
 *   resend.requests          // every HTTP request: method, path, headers (lower-case, incl. idempotency-key), body, status
 *   resend.failNext(2, 503, 7)     // the next 2 requests answer 503 with `Retry-After: 7`
 *   resend.failNext(1, "network")  // the next request's connection is dropped (the SDK reports statusCode null)
 *   resend.failNext(1, 422, undefined, { name: "invalid_from_address", bare: true })  // Resend's body without `statusCode`
 *   resend.setFailureRatio(0.3, 500) // from now on ~30 % of requests fail (0 turns it off)
 *   resend.hangNext(1, 65_000) // the next request gets no answer for 65 s, then is processed as usual (delivered, even
 *       if its client gave up meanwhile); resend.releaseHung() processes the hanging ones at once
 *   resend.reset()           // forget emails, requests, failures and idempotency keys
 *
 * Opt-in limits like Resend's (all off by default, so a plain fake never refuses a well-formed call):
 *   startFakeResend({ ratePerSecond: 5 })  // per API key: more than 5 calls within any 1 s window answer 429
 *       rate_limit_exceeded; every answer carries ratelimit-limit / ratelimit-remaining / ratelimit-reset (seconds,
 *       millisecond precision) and a 429 also retry-after (whole seconds)
 *   startFakeResend({ dailyQuota: 1000 })  // per API key: a call that would deliver email number 1,001 answers
 *       429 daily_quota_exceeded (nothing of it is delivered); resend.setDailyQuota(undefined) lifts it
 *   startFakeResend({ batchLimit: 100 })   // emails per batch call (default 100, Resend's)
 *   await resend.close(); clearResendTransport();
 *
 * Endpoints (as the SDK calls them): POST /emails → 200 `{ id }`; POST /emails/batch (≤ 100 emails) → 200
 * `{ data: [{ id }] }`. Errors use Resend's body `{ statusCode, name, message }`. Idempotency like Resend: a
 * repeated `Idempotency-Key` with the same body answers the first response again and delivers nothing;
 * with a different body it answers 409 `invalid_idempotent_request`. Failed requests do not claim the key.
 * Every request needs `Authorization: Bearer <any key>` (else 401 `missing_api_key`).
 */
export type DeliveredEmail = {
  id: string;
  from: string;
  to: string[];
  subject: string;
  text?: string;
  html?: string;
  /** The Idempotency-Key of the request that delivered it (for a batch, the batch's key). */
  idempotencyKey?: string;
  batch: boolean;
  /** Custom headers of the email (List-Unsubscribe, List-Unsubscribe-Post). */
  headers?: Record<string, string>;
};

export type FakeResendOptions = { ratePerSecond?: number; dailyQuota?: number; batchLimit?: number };

export type RecordedRequest = {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
  status: number;
};

export type FakeResend = {
  url: string;
  emails(): DeliveredEmail[];
  emailsTo(address: string): DeliveredEmail[];
  requests: RecordedRequest[];
  failNext(count: number, status: number | "network", retryAfterSeconds?: number, error?: { name?: string; bare?: boolean }): void;
  hangNext(count: number, ms: number): void;
  /** Requests hanging now (hangNext). */
  hanging(): number;
  releaseHung(): void;
  setFailureRatio(ratio: number, status?: number): void;
  /** Changes (or lifts, with undefined) the daily quota; emails already delivered keep counting. */
  setDailyQuota(quota: number | undefined): void;
  reset(): void;
  close(): Promise<void>;
};

/** `bare`: the error body carries only `name` and `message` (no `statusCode`), as some Resend refusals do. */
type Failure = { status: number | "network"; retryAfterSeconds?: number; name?: string; bare?: boolean };
type Answer = { status: number; body: unknown };

const errorNames: Record<number, string> = {
  400: "validation_error",
  401: "missing_api_key",
  403: "invalid_api_key",
  409: "invalid_idempotent_request",
  422: "validation_error",
  429: "rate_limit_exceeded",
};

function errorBody(status: number, message: string, name = errorNames[status] ?? "internal_server_error") {
  return { statusCode: status, name, message };
}

export async function startFakeResend(options: FakeResendOptions = {}): Promise<FakeResend> {
  const batchLimit = options.batchLimit ?? 100;
  let dailyQuota = options.dailyQuota;
  /** Arrival times of the accepted calls of the last second, per API key (a sliding window: the strictest reading). */
  const callTimes = new Map<string, number[]>();
  const deliveredPerKey = new Map<string, number>();
  const delivered: DeliveredEmail[] = [];
  const requests: RecordedRequest[] = [];
  const pendingFailures: Failure[] = [];
  const idempotent = new Map<string, { bodyText: string; answer: Answer }>();
  let failureRatio = 0;
  let ratioStatus = 500;
  let hangs: { count: number; ms: number } = { count: 0, ms: 0 };
  const hanging = new Set<() => void>();

  const toEmail = (raw: Record<string, unknown>, key: string | undefined, batch: boolean): DeliveredEmail => ({
    id: randomUUID(),
    from: String(raw.from ?? ""),
    to: (Array.isArray(raw.to) ? raw.to : [raw.to]).map(String),
    subject: String(raw.subject ?? ""),
    text: typeof raw.text === "string" ? raw.text : undefined,
    html: typeof raw.html === "string" ? raw.html : undefined,
    idempotencyKey: key,
    batch,
    headers: raw.headers && typeof raw.headers === "object" ? (raw.headers as Record<string, string>) : undefined,
  });

  function validate(raw: unknown): string | null {
    if (!raw || typeof raw !== "object") return "The email must be an object";
    const email = raw as Record<string, unknown>;
    if (!email.from) return "Missing `from` field.";
    if (!email.to || (Array.isArray(email.to) && email.to.length === 0)) return "Missing `to` field.";
    if (typeof email.subject !== "string") return "Missing `subject` field.";
    if (typeof email.text !== "string" && typeof email.html !== "string") return "Missing `html` or `text` field.";
    return null;
  }

  function deliver(path: string, body: unknown, key: string | undefined): Answer {
    if (path === "/emails") {
      const problem = validate(body);
      if (problem) return { status: 422, body: errorBody(422, problem) };
      const email = toEmail(body as Record<string, unknown>, key, false);
      delivered.push(email);
      return { status: 200, body: { id: email.id } };
    }
    if (path === "/emails/batch") {
      if (!Array.isArray(body)) return { status: 422, body: errorBody(422, "The batch must be an array") };
      if (body.length > batchLimit) return { status: 422, body: errorBody(422, `Too many emails: at most ${batchLimit} per batch`) };
      const problem = body.map(validate).find((p) => p !== null);
      if (problem) return { status: 422, body: errorBody(422, problem) };
      const emails = body.map((raw) => toEmail(raw as Record<string, unknown>, key, true));
      delivered.push(...emails);
      return { status: 200, body: { data: emails.map((e) => ({ id: e.id })) } };
    }
    return { status: 404, body: errorBody(404, "Not found", "not_found") };
  }

  function nextFailure(): Failure | undefined {
    if (pendingFailures.length) return pendingFailures.shift();
    if (failureRatio > 0 && Math.random() < failureRatio) return { status: ratioStatus };
    return undefined;
  }

  /** Takes a call of the key's per-second budget, or says 429; the headers describe the window either way. */
  function rateLimit(apiKey: string, now: number): { status: 200 | 429; headers: Record<string, string> } {
    const limit = options.ratePerSecond;
    if (!limit) return { status: 200, headers: {} };
    const times = (callTimes.get(apiKey) ?? []).filter((t) => t > now - 1000);
    callTimes.set(apiKey, times);
    const resetMs = times.length > 0 ? times[0] + 1000 - now : 1000;
    const header = (remaining: number) => ({
      "ratelimit-limit": String(limit),
      "ratelimit-remaining": String(remaining),
      "ratelimit-reset": (Math.max(0, resetMs) / 1000).toFixed(3),
    });
    if (times.length >= limit) {
      return { status: 429, headers: { ...header(0), "retry-after": String(Math.max(1, Math.ceil(resetMs / 1000))) } };
    }
    times.push(now);
    return { status: 200, headers: header(limit - times.length) };
  }

  const server = http.createServer((req, res) => {
    // A call counts from its arrival, not from the end of its body (a 100-email batch takes a while to read).
    const arrivedAt = performance.now();
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      if (hangs.count > 0) {
        hangs.count--;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, hangs.ms);
          function done() {
            clearTimeout(timer);
            hanging.delete(done);
            resolve();
          }
          hanging.add(done);
        });
      }
      const bodyText = Buffer.concat(chunks).toString("utf8");
      let body: unknown = undefined;
      try {
        body = bodyText ? JSON.parse(bodyText) : undefined;
      } catch {
        body = bodyText;
      }
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : String(v)]));
      const path = (req.url ?? "/").split("?")[0];
      const record: RecordedRequest = { method: req.method ?? "GET", path, headers, body, status: 0 };
      requests.push(record);
      const send = (answer: Answer, extraHeaders: Record<string, string> = {}) => {
        record.status = answer.status;
        res.writeHead(answer.status, { "content-type": "application/json", ...extraHeaders });
        res.end(JSON.stringify(answer.body));
      };

      const failure = nextFailure();
      if (failure?.status === "network") {
        record.status = -1;
        req.socket.destroy();
        return;
      }
      if (failure) {
        const extra: Record<string, string> = failure.retryAfterSeconds !== undefined ? { "retry-after": String(failure.retryAfterSeconds) } : {};
        const error = errorBody(failure.status as number, "Injected failure", failure.name);
        return send({ status: failure.status, body: failure.bare ? { name: error.name, message: error.message } : error }, extra);
      }
      if (!/^Bearer \S+/.test(headers.authorization ?? "")) return send({ status: 401, body: errorBody(401, "Missing API key") });
      if (req.method !== "POST") return send({ status: 405, body: errorBody(405, "Method not allowed", "method_not_allowed") });

      const apiKey = headers.authorization;
      const limited = rateLimit(apiKey, arrivedAt);
      if (limited.status === 429) return send({ status: 429, body: errorBody(429, "Too many requests. You can only make 5 requests per second.") }, limited.headers);
      const key = headers["idempotency-key"];
      if (key) {
        const seen = idempotent.get(`${path} ${key}`);
        if (seen && seen.bodyText !== bodyText) {
          return send({ status: 409, body: errorBody(409, "Same idempotency key used with a different request body") });
        }
        if (seen) return send(seen.answer, limited.headers);
      }
      const count = path === "/emails/batch" && Array.isArray(body) ? body.length : 1;
      const used = deliveredPerKey.get(apiKey) ?? 0;
      if (dailyQuota !== undefined && used + count > dailyQuota) {
        return send({ status: 429, body: errorBody(429, "You have reached your daily email sending quota.", "daily_quota_exceeded") }, limited.headers);
      }
      const answer = deliver(path, body, key);
      if (answer.status === 200) deliveredPerKey.set(apiKey, used + count);
      if (key && answer.status === 200) idempotent.set(`${path} ${key}`, { bodyText, answer });
      send(answer, limited.headers);
    });
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    emails: () => [...delivered],
    emailsTo: (address) => delivered.filter((e) => e.to.includes(address)),
    requests,
    failNext(count, status, retryAfterSeconds, error) {
      for (let i = 0; i < count; i++) pendingFailures.push({ status, retryAfterSeconds, ...error });
    },
    hangNext(count, ms) {
      hangs = { count, ms };
    },
    hanging: () => hanging.size,
    releaseHung() {
      for (const done of [...hanging]) done();
    },
    setFailureRatio(ratio, status = 500) {
      failureRatio = ratio;
      ratioStatus = status;
    },
    setDailyQuota(quota) {
      dailyQuota = quota;
    },
    reset() {
      delivered.length = 0;
      requests.length = 0;
      pendingFailures.length = 0;
      idempotent.clear();
      failureRatio = 0;
      callTimes.clear();
      deliveredPerKey.clear();
      hangs = { count: 0, ms: 0 };
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const done of [...hanging]) done();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Points the app's email transport (the real Resend SDK) at `url`: a fake Resend, or a proxy in front of one. */
export function useResendTransport(url: string, apiKey = "re_test"): void {
  process.env.RESEND_API_KEY = apiKey;
  process.env.RESEND_BASE_URL = url;
  resetConfig();
}

/** Back to the local mailbox transport. */
export function clearResendTransport(): void {
  delete process.env.RESEND_API_KEY;
  delete process.env.RESEND_BASE_URL;
  resetConfig();
}
