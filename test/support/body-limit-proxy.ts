import http from "node:http";
import type { AddressInfo } from "node:net";

/** Vercel refuses request bodies over 4.5 MB before a function runs. */
export const VERCEL_BODY_LIMIT = 4_500_000;

export type ProxyOptions = {
  target: string;
  limit?: number;
  /**
   * Cut the client's connection once this many request-body bytes have passed through the proxy in total (counted
   * over every request), as a dropped network would: once only.
   */
  cutAfterBytes?: number;
  /** Send each request to the next target in turn (two app instances behind one address). */
  targets?: string[];
};

export type BodyLimitProxy = {
  url: string;
  refused: number;
  cuts: number;
  /** Request-body bytes forwarded to the app, per target. */
  forwarded: Map<string, number>;
  /** Requests forwarded, per target. */
  requests: Map<string, number>;
  close: () => Promise<void>;
};

/**
 * A small reverse proxy that behaves like Vercel's edge in front of a function: a request body over `limit` bytes
 * (declared or counted) is answered 413 `FUNCTION_PAYLOAD_TOO_LARGE` and never reaches the app. It can also cut a
 * connection half-way through (`cutAfterBytes`) and spread requests over several app instances (`targets`).
 */
export async function startBodyLimitProxy(options: ProxyOptions): Promise<BodyLimitProxy> {
  const limit = options.limit ?? VERCEL_BODY_LIMIT;
  const targets = options.targets ?? [options.target];
  let next = 0;
  let passed = 0;
  const state: BodyLimitProxy = { url: "", refused: 0, cuts: 0, forwarded: new Map(), requests: new Map(), close: async () => {} };
  const tooLarge = (res: http.ServerResponse) => {
    state.refused++;
    res.writeHead(413, { "content-type": "text/plain", connection: "close" }).end("Request Entity Too Large\n\nFUNCTION_PAYLOAD_TOO_LARGE\n");
  };
  const server = http.createServer((req, res) => {
    const declared = Number(req.headers["content-length"] ?? "NaN");
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      tooLarge(res);
      return;
    }
    const target = new URL(targets[next++ % targets.length]);
    state.requests.set(target.origin, (state.requests.get(target.origin) ?? 0) + 1);
    const upstream = http.request({
      host: target.hostname,
      port: target.port,
      method: req.method,
      path: req.url,
      headers: { ...req.headers, host: target.host },
    });
    upstream.on("response", (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      passed += chunk.length;
      if (size > limit) {
        upstream.destroy();
        req.unpipe(upstream);
        if (!res.headersSent) tooLarge(res);
        return;
      }
      if (options.cutAfterBytes !== undefined && state.cuts === 0 && passed >= options.cutAfterBytes) {
        state.cuts++;
        // Both sides see the connection drop mid-body, as with a lost network.
        upstream.destroy();
        req.socket.destroy();
        return;
      }
      state.forwarded.set(target.origin, (state.forwarded.get(target.origin) ?? 0) + chunk.length);
      upstream.write(chunk);
    });
    req.on("end", () => upstream.end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}
