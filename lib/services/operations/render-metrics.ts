import "server-only";
import { createHash, timingSafeEqual } from "node:crypto";
import { getDb } from "@/db/client";
import { getConfig } from "@/lib/config";
import { getEmbeddedExecutor } from "@/lib/engine";
import { AppError, notFound } from "@/lib/errors";
import { renderMetrics, setMetricsCollectors } from "@/lib/observability/metrics";
import { readQueueGauges } from "./read-queue-gauges";

const digest = (value: string) => createHash("sha256").update(value).digest();

/** The bearer token matches METRICS_TOKEN (compared in constant time). */
function authorized(header: string | null, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match !== null && timingSafeEqual(digest(match[1]), digest(token));
}

/**
 * The Prometheus exposition for `Authorization: Bearer <METRICS_TOKEN>`. Without METRICS_TOKEN the endpoint does not
 * exist (404): metrics are opt-in. The queue gauges are read from the database at each scrape.
 */
export async function scrapeMetrics(authorization: string | null): Promise<{ body: string; contentType: string }> {
  const token = getConfig().metricsToken;
  if (!token) throw notFound("Resource");
  if (!authorized(authorization, token)) {
    throw new AppError("unauthorized", "Send the metrics token: `Authorization: Bearer <METRICS_TOKEN>`.", { headers: { "WWW-Authenticate": 'Bearer realm="metrics"' } });
  }
  setMetricsCollectors({
    queue: async () => readQueueGauges(await getDb()),
    executor: () => getEmbeddedExecutor()?.slotUsage() ?? { busy: 0, slots: 0 },
  });
  return renderMetrics();
}
