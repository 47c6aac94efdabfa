import "server-only";
import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { getConfig } from "@/lib/config";
import { AppError } from "@/lib/errors";
import { classifyAddress } from "@/lib/net/ip-classify";

// Guard for every request the server makes to an address a user typed (webhook URLs, openai-compatible
// base URLs). The URL is checked once, every address its host resolves to is checked, and safeFetch then
// connects to exactly those addresses — a DNS answer that changes between check and connect (rebinding)
// cannot send the request somewhere else.

export type SafeTarget = { url: URL; addresses: string[] };
const WEB_PORTS = new Set(["443", "80"]);
export type SafeTargetOptions = { allowPrivate?: boolean };

function refuse(detail: string): never {
  throw new AppError("validation_failed", detail, {
    errors: [{ path: "url", code: "unsafe_url", message: detail }],
  });
}

function parseTarget(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    refuse("The URL is not a valid absolute URL");
  }
  const allowedProtocols = allowPrivate ? ["https:", "http:"] : ["https:"];
  if (!allowedProtocols.includes(url.protocol)) {
    refuse(allowPrivate ? "The URL must start with https:// or http://" : "The URL must use https://");
  }
  if (url.username || url.password) refuse("The URL must not contain a user name or password");
  if (url.hostname === "") refuse("The URL has no host");
  // Web ports only: a public host's other ports are often internal services (Redis 6379, SMTP 25, databases) that a
  // crafted request could talk to. The URL parser writes the scheme's default port as "".
  if (!allowPrivate && url.port !== "" && !WEB_PORTS.has(url.port)) {
    refuse(`The URL uses port ${url.port}; only ports 443 and 80 are allowed`);
  }
  return url;
}

/** The host as the resolver wants it: IPv6 brackets and a trailing root dot removed. */
export function bareHost(url: URL): string {
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  return host.endsWith(".") ? host.slice(0, -1) : host;
}

async function resolveAll(host: string): Promise<string[]> {
  if (isIP(host)) return [host];
  try {
    const answers = await dnsLookup(host, { all: true, verbatim: true });
    return answers.map((a) => a.address);
  } catch {
    refuse(`The host ${host} could not be resolved`);
  }
}

/**
 * Checks that `raw` may be contacted: https only, port 443 or 80, and every resolved address public, unless private
 * targets are allowed (ALLOW_PRIVATE_NETWORK_TARGETS, then http, any port and private addresses pass too).
 * Throws AppError 422 `validation_failed` with a sentence saying why.
 */
export async function assertSafeTargetUrl(raw: string, opts: SafeTargetOptions = {}): Promise<SafeTarget> {
  const allowPrivate = opts.allowPrivate ?? getConfig().allowPrivateNetworkTargets;
  const url = parseTarget(raw, allowPrivate);
  const host = bareHost(url).toLowerCase();
  if (!allowPrivate && (host === "localhost" || host.endsWith(".localhost"))) {
    refuse(`The host ${host} is a loopback name; only public addresses are allowed`);
  }
  const addresses = await resolveAll(host);
  if (addresses.length === 0) refuse(`The host ${host} could not be resolved`);
  if (!allowPrivate) {
    for (const address of addresses) {
      const reason = classifyAddress(address);
      if (reason) refuse(`The host ${host} resolves to ${address} (${reason}); only public addresses are allowed`);
    }
  }
  return { url, addresses };
}

export type SafeFetchInit = {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  timeoutMs: number;
  maxResponseBytes: number;
  allowPrivate?: boolean;
};

export type SafeFetchResponse = {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The first `maxResponseBytes` of the body, decoded as UTF-8. */
  body: string;
  truncated: boolean;
};

/** Network-level failure (refused, reset, timed out, TLS): the message is safe to store and show. */
export class SafeFetchError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SafeFetchError";
  }
}

/** A `lookup` that answers only with the addresses already checked, whatever DNS says now. */
export function pinnedLookup(addresses: string[]): LookupFunction {
  const entries = addresses.map((address) => ({ address, family: isIP(address) === 6 ? 6 : 4 }));
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, entries);
    else callback(null, entries[0]!.address, entries[0]!.family);
  }) as unknown as LookupFunction;
}

/**
 * One request to a checked target: no redirects followed (a 3xx is returned as it is), a hard timeout
 * for the whole exchange, and at most `maxResponseBytes` of the body read.
 */
export async function safeFetch(raw: string, init: SafeFetchInit): Promise<SafeFetchResponse> {
  const { url, addresses } = await assertSafeTargetUrl(raw, { allowPrivate: init.allowPrivate });
  const client = url.protocol === "https:" ? https : http;
  return new Promise<SafeFetchResponse>((resolve, reject) => {
    const req = client.request({
      protocol: url.protocol,
      hostname: bareHost(url),
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      method: init.method ?? "GET",
      headers: { ...init.headers, host: url.host },
      lookup: pinnedLookup(addresses),
      agent: false,
    });
    const timer = setTimeout(
      () => req.destroy(new SafeFetchError(`Timed out after ${init.timeoutMs} ms`)),
      init.timeoutMs,
    );
    const fail = (error: Error) => {
      clearTimeout(timer);
      reject(error instanceof SafeFetchError ? error : new SafeFetchError(describeNetworkError(error), { cause: error }));
    };
    req.on("error", fail);
    req.on("response", (res) => {
      readLimited(res, init.maxResponseBytes).then(({ body, truncated }) => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, truncated });
      }, fail);
    });
    req.end(init.body);
  });
}

function readLimited(res: http.IncomingMessage, maxBytes: number): Promise<{ body: string; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (truncated: boolean) => {
      if (done) return;
      done = true;
      resolve({ body: Buffer.concat(chunks).subarray(0, maxBytes).toString("utf8"), truncated });
    };
    res.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= maxBytes) {
        finish(size > maxBytes);
        // Stop reading: a huge or endless answer must not fill memory.
        res.destroy();
      }
    });
    res.on("end", () => finish(false));
    res.on("error", (error) => {
      if (!done) reject(error);
      done = true;
    });
    res.on("close", () => {
      if (!done && !res.complete) reject(new SafeFetchError("Connection closed before the response ended"));
      finish(false);
    });
  });
}

function describeNetworkError(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ECONNREFUSED") return "Connection refused";
  if (code === "ECONNRESET") return "Connection reset";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "Host could not be resolved";
  if ((code && code.startsWith("ERR_TLS")) || /certificate|SSL|TLS/i.test(error.message)) return `TLS error: ${error.message}`;
  return code ? `Network error (${code})` : `Network error: ${error.message}`;
}
