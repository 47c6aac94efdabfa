import { z } from "zod";
import type { OperationSpec } from "@/lib/http/openapi";

export const healthResponse = z.object({ status: z.literal("ok"), db: z.literal("ok") });

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
    path: "/api/openapi.json",
    operationId: "getOpenApi",
    summary: "This OpenAPI 3.1 document",
    tag: "System",
    auth: false,
    responses: { 200: { description: "OpenAPI document" } },
  },
];
