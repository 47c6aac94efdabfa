import { createServer } from "node:http";
import { AppError } from "@/lib/errors";
import { log } from "@/lib/log";

/**
 * WORKER_PORT set: the worker answers the operator's three probes there, as a web process does — GET /api/health
 * (liveness), GET /api/health/ready and GET /api/metrics (with METRICS_TOKEN) — and nothing else (404). Unset: it
 * listens on no port. Returns the port listened on.
 */
export async function startWorkerMetricsServer(port: number): Promise<number | undefined> {
  if (port <= 0) return undefined;
  const { checkReadiness } = await import("@/lib/services/operations/check-readiness");
  const { scrapeMetrics } = await import("@/lib/services/operations/render-metrics");
  const server = createServer((req, res) => {
    const send = (status: number, body: string, type = "application/json", headers: Record<string, string> = {}) => {
      res.writeHead(status, { "Content-Type": type, "Cache-Control": "no-store", ...headers });
      res.end(body);
    };
    const path = (req.url ?? "/").split("?")[0];
    void (async () => {
      if (req.method !== "GET") return send(405, JSON.stringify({ status: 405, title: "Method not allowed" }));
      if (path === "/api/health") return send(200, JSON.stringify({ status: "ok" }));
      if (path === "/api/health/ready") {
        const { ready, state } = await checkReadiness();
        return send(ready ? 200 : 503, JSON.stringify(state));
      }
      if (path === "/api/metrics") {
        try {
          const { body, contentType } = await scrapeMetrics(req.headers.authorization ?? null);
          return send(200, body, contentType);
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          return send(error.status, JSON.stringify({ status: error.status, title: error.title, detail: error.message }), "application/problem+json", error.headers ?? {});
        }
      }
      return send(404, JSON.stringify({ status: 404, title: "Not found" }), "application/problem+json");
    })().catch((error: unknown) => {
      log.error("worker probe failed", { error, path });
      send(500, JSON.stringify({ status: 500, title: "Internal server error" }), "application/problem+json");
    });
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, () => resolve()));
  server.unref();
  return port;
}
