import { route } from "@/lib/http/route";
import { scrapeMetrics } from "@/lib/services/operations/render-metrics";

export const dynamic = "force-dynamic";

// GET /api/metrics – Prometheus metrics, only when METRICS_TOKEN is set (then its bearer token is required)
export const GET = route({ auth: false }, async ({ req }) => {
  const { body, contentType } = await scrapeMetrics(req.headers.get("authorization"));
  return new Response(body, { status: 200, headers: { "Content-Type": contentType, "Cache-Control": "no-store" } });
});
