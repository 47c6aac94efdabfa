import { z } from "zod";
import type { OperationSpec } from "@/lib/http/openapi";

export const healthResponse = z.object({ status: z.literal("ok"), db: z.literal("ok") });

export const readinessResponse = z.object({
  database: z.enum(["ok", "unreachable"]),
  migrations: z.enum(["current", "behind", "unknown"]),
  executor: z.enum(["running", "off"]).describe("Whether this process executes runs (EXECUTOR=off: it only enqueues)"),
});

export const systemOperations: OperationSpec[] = [
  {
    method: "get",
    path: "/api/health",
    operationId: "getHealth",
    summary: "Liveness and database check",
    tag: "System",
    auth: false,
    responses: { 200: { description: "Healthy", schema: healthResponse }, 503: { description: "Database unreachable" } },
  },
  {
    method: "get",
    path: "/api/health/ready",
    operationId: "getReadiness",
    summary: "Readiness: database reachable, migrations current, executor running or off",
    tag: "System",
    auth: false,
    responses: {
      200: { description: "Ready", schema: readinessResponse },
      503: { description: "Not ready: the same document names what is wrong", schema: readinessResponse },
    },
  },
  {
    method: "get",
    path: "/api/metrics",
    operationId: "getMetrics",
    summary: "Prometheus metrics (text exposition format); only when METRICS_TOKEN is set, with `Authorization: Bearer <METRICS_TOKEN>`",
    tag: "System",
    auth: false,
    responses: {
      200: { description: "Metrics in the Prometheus text format (text/plain; version=0.0.4)" },
      401: { description: "Missing or wrong metrics token" },
      404: { description: "Metrics are off (METRICS_TOKEN is not set)" },
    },
  },
  {
    method: "get",
    path: "/api/openapi.json",
    operationId: "getOpenApi",
    summary: "This OpenAPI 3.1 document",
    tag: "System",
    auth: false,
    responses: { 200: { description: "OpenAPI document" } },
  },
];
