import { randomBytes } from "node:crypto";
import http from "node:http";
import { getConfig } from "@/lib/config";
import { log } from "@/lib/log";

// Route handlers do not see the socket, and Next.js fills X-Forwarded-For with the socket address only when the client
// sent none (`??=`), so that header is whatever a client wants it to be. So the server process stamps every request,
// before Next.js sees it, with the socket's address under a header of its own, prefixed with a random token of this
// process: a client can send a header of that name, but not one carrying the token (it is overwritten anyway).
// Only with TRUST_PROXY=true (a proxy of ours in front, which appends the address it saw) is the last
// X-Forwarded-For entry used instead.

export const CLIENT_ADDRESS_HEADER = "x-flowmail-client-address";

const holder = globalThis as unknown as { __flowmailClientAddressToken?: string; __flowmailClientAddressHook?: boolean };

/** The process's token (on globalThis: instrumentation and the route bundles are separate module graphs). */
function processToken(): string {
  return (holder.__flowmailClientAddressToken ??= randomBytes(16).toString("hex"));
}

/** The header value that names `address` as this request's socket address (the hook below, and tests). */
export function stampedClientAddress(address: string): string {
  return `${processToken()} ${address}`;
}

/**
 * Stamps the socket address on every request this process's HTTP servers receive (called once from instrumentation,
 * which runs in the server process before requests are handled).
 */
export function installClientAddressCapture(): void {
  if (holder.__flowmailClientAddressHook) return;
  holder.__flowmailClientAddressHook = true;
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function patchedEmit(this: http.Server, event: string | symbol, ...args: unknown[]) {
    if (event === "request") {
      const req = args[0] as http.IncomingMessage;
      req.headers[CLIENT_ADDRESS_HEADER] = stampedClientAddress(req.socket?.remoteAddress ?? "");
    }
    return (emit as (this: http.Server, event: string | symbol, ...rest: unknown[]) => boolean).call(this, event, ...args);
  } as typeof emit;
}

let warned = false;

/**
 * The address a request came from, for per-client throttles: the socket's (stamped above), or with TRUST_PROXY=true the
 * last X-Forwarded-For entry. Null when it cannot be known (no stamp: a custom server without the hook).
 */
export function clientAddress(req: Request): string | null {
  if (getConfig().trustProxy) {
    const forwarded = req.headers.get("x-forwarded-for")?.split(",").map((part) => part.trim()).filter(Boolean);
    if (forwarded?.length) return normalise(forwarded[forwarded.length - 1]);
  }
  const stamped = req.headers.get(CLIENT_ADDRESS_HEADER);
  const token = holder.__flowmailClientAddressToken;
  if (stamped && token && stamped.startsWith(`${token} `)) {
    const address = stamped.slice(token.length + 1);
    if (address) return normalise(address);
  }
  if (!warned) {
    warned = true;
    log.warn("client address unknown: per-address throttles are skipped (run `next start`, or set TRUST_PROXY=true behind a proxy)");
  }
  return null;
}

/**
 * IPv4 seen through an IPv6 socket (`::ffff:1.2.3.4`) is the same client as `1.2.3.4`; an IPv6 client counts by its /64
 * (one subscriber's network: anyone holding one address holds its 2^64 neighbours too).
 */
function normalise(address: string): string {
  const lower = address.toLowerCase().replace(/%.*$/, "");
  if (lower.startsWith("::ffff:") && lower.includes(".")) return lower.slice(7);
  if (!lower.includes(":")) return lower;
  const [head, tail] = lower.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = tail === undefined ? left : [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, "")).join(":")}::/64`;
}
