import "server-only";
import http from "node:http";
import https from "node:https";
import { Readable } from "node:stream";
import { assertSafeTargetUrl, bareHost, pinnedLookup, type SafeTargetOptions } from "./ssrf";

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * A `fetch` for SDKs that take one (the AI SDK's `fetch` option for `openai-compatible` base URLs): every request
 * is checked with assertSafeTargetUrl at the time it is made, and connects to the checked addresses only, so a
 * base URL whose DNS later points inside the network is refused instead of called. Redirects are returned,
 * not followed; the answer streams (server-sent events work). Responses are asked for uncompressed, since
 * node:http does not decompress.
 */
export function createGuardedFetch(opts: SafeTargetOptions = {}): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const { url, addresses } = await assertSafeTargetUrl(request.url, opts);
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const headers = Object.fromEntries(request.headers);
    const client = url.protocol === "https:" ? https : http;
    return new Promise<Response>((resolve, reject) => {
      const req = client.request({
        protocol: url.protocol,
        hostname: bareHost(url),
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: request.method,
        headers: { ...headers, host: url.host, "accept-encoding": "identity" },
        lookup: pinnedLookup(addresses),
        agent: false,
        signal: request.signal,
      });
      req.on("error", reject);
      req.on("response", (res) => resolve(toResponse(res, request.method)));
      req.end(body);
    });
  };
}

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
