import "server-only";
import http from "node:http";
import https from "node:https";
import { Readable } from "node:stream";
import { assertSafeTargetUrl, bareHost, pinnedLookup, type SafeTargetOptions } from "./ssrf";

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/** How long an idle connection is kept for the next call (shorter when the server's Keep-Alive hint says so). */
const IDLE_SOCKET_MS = 4_000;

/**
 * Keep-alive pools whose key includes the addresses a request's own check allowed (`pinned`): a connection is handed
 * only to a request whose check, made when that request was, gave the same addresses, so every request still goes to
 * an address checked for it; a new connection is made through pinnedLookup as before. An AI node's thousands of calls
 * to one provider then reuse a few connections instead of opening (and leaving in TIME_WAIT) one per call.
 */
type PinnedOptions = http.RequestOptions & { pinned?: string };
class PinnedHttpAgent extends http.Agent {
  override getName(options?: PinnedOptions): string {
    return `${super.getName(options)}|${options?.pinned ?? ""}`;
  }
}
class PinnedHttpsAgent extends https.Agent {
  override getName(options?: PinnedOptions): string {
    return `${super.getName(options)}|${options?.pinned ?? ""}`;
  }
}
const agents = {
  "http:": new PinnedHttpAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
  "https:": new PinnedHttpsAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
};

/**
 * A `fetch` for SDKs that take one (the AI SDK's `fetch` option for `openai-compatible` base URLs): every request
 * is checked with assertSafeTargetUrl at the time it is made, and connects to the checked addresses only, so a
 * base URL whose DNS later points inside the network is refused instead of called; a kept-alive connection is reused
 * only by a request whose own check gave the same addresses (PinnedHttpAgent). Redirects are returned,
 * not followed; the answer streams (server-sent events work). Responses are asked for uncompressed, since
 * node:http does not decompress.
 */
export function createGuardedFetch(opts: SafeTargetOptions = {}): typeof fetch {
  return async (input, init) => {
    const request = directRequest(input, init) ?? (await viaRequest(new Request(input, init)));
    const { url, addresses } = await assertSafeTargetUrl(request.url, opts);
    const { body, headers } = request;
    const client = url.protocol === "https:" ? https : http;
    return new Promise<Response>((resolve, reject) => {
      const options: PinnedOptions = {
        protocol: url.protocol,
        hostname: bareHost(url),
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: request.method,
        headers: { ...headers, host: url.host, "accept-encoding": "identity" },
        lookup: pinnedLookup(addresses),
        agent: agents[url.protocol as keyof typeof agents],
        pinned: addresses.join(","),
        signal: request.signal,
      };
      const req = client.request(options);
      req.on("error", reject);
      req.on("response", (res) => resolve(toResponse(res, request.method)));
      req.end(body);
    });
  };
}

type RequestParts = { url: string; method: string; headers: Record<string, string>; body: Buffer | undefined; signal: AbortSignal | undefined };

async function viaRequest(request: Request): Promise<RequestParts> {
  const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
  return { url: request.url, method: request.method, headers: Object.fromEntries(request.headers), body, signal: request.signal };
}

/**
 * What `new Request(input, init)` would give, without making one, for the SDKs' calls: a URL string, an upper-case
 * method, a string or byte body. A Request follows `init.signal` with a signal of its own, registered for
 * finalization, which kept the caller's signal and its listeners alive after the call: at hundreds of AI calls a
 * second, promoted garbage. Anything else (a Request, a stream or form body, another method) goes through Request.
 */
function directRequest(input: RequestInfo | URL, init: RequestInit | undefined): RequestParts | undefined {
  if (typeof input !== "string" && !(input instanceof URL)) return undefined;
  const method = init?.method ?? "GET";
  if (!DIRECT_METHODS.has(method)) return undefined;
  const raw = init?.body;
  if (raw !== undefined && raw !== null && typeof raw !== "string" && !(raw instanceof Uint8Array)) return undefined;
  const body = raw === undefined || raw === null ? undefined : typeof raw === "string" ? Buffer.from(raw, "utf8") : Buffer.from(raw);
  // Request refuses a body on GET and HEAD: so does it here.
  if (body && (method === "GET" || method === "HEAD")) return undefined;
  const headers = new Headers(init?.headers);
  // A string body is text/plain unless the caller says otherwise, as Request and fetch make it.
  if (typeof raw === "string" && !headers.has("content-type")) headers.set("content-type", "text/plain;charset=UTF-8");
  return { url: new URL(String(input)).href, method, headers: Object.fromEntries(headers), body, signal: init?.signal ?? undefined };
}
const DIRECT_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

function toResponse(res: http.IncomingMessage, method: string): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  const status = res.statusCode ?? 502;
  const noBody = NULL_BODY_STATUSES.has(status) || method === "HEAD";
  if (noBody) res.resume();
  const body = noBody ? null : (Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>);
  return new Response(body, { status, statusText: res.statusMessage, headers });
}
