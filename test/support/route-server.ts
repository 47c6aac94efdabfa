import http from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
export type RouteTable = { pattern: RegExp; module: Record<string, unknown> }[];

export type RouteServer = { url: string; close: () => Promise<void>; requests: { method: string; path: string }[] };

/**
 * Serves route handlers over real HTTP (node:http), the way `next start` calls them: a streamed web Request in,
 * the Response streamed out. Lets real clients (tus-js-client) talk to the handlers without a Next build.
 * A pattern's named groups become the route's params.
 */
export async function serveRoutes(routes: RouteTable, port = 0): Promise<RouteServer> {
  const requests: { method: string; path: string }[] = [];
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
    requests.push({ method: req.method ?? "GET", path: url.pathname });
    const match = routes.map((r) => ({ r, m: r.pattern.exec(url.pathname) })).find((x) => x.m);
    const handler = match?.r.module[req.method ?? "GET"] as Handler | undefined;
    if (!match || !handler) {
      res.writeHead(match ? 405 : 404).end();
      return;
    }
    const abort = new AbortController();
    res.on("close", () => abort.abort());
    const hasBody = req.method !== "GET" && req.method !== "HEAD";
    const request = new Request(url, {
      method: req.method,
      headers: Object.entries(req.headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)] as [string, string]])),
      body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : undefined,
      signal: abort.signal,
      // @ts-expect-error Node's fetch needs duplex for streamed bodies
      duplex: "half",
    });
    try {
      const response = await handler(request, { params: Promise.resolve({ ...match.m!.groups }) });
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (!response.body || req.method === "HEAD") {
        res.end();
        return;
      }
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) res.write(chunk);
      res.end();
    } catch (error) {
      console.error("route-server: handler threw", error);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const { port: actual } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${actual}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
