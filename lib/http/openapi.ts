import { z, type ZodType } from "zod";
import { NODE_TYPES } from "@/lib/graph/schema";
import { ERROR_CODES } from "./errors";

export type HttpMethod = "get" | "post" | "put" | "patch" | "delete" | "head" | "options";

export type OperationSpec = {
  method: HttpMethod;
  /** Express-style path, e.g. `/api/workflows/:workflowId`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  auth: boolean;
  body?: ZodType;
  /** The body may be left out (POST …/run: no body is a live run). */
  bodyOptional?: boolean;
  /** Set for non-JSON bodies (multipart uploads). */
  bodyContentType?: string;
  query?: ZodType;
  headers?: { name: string; description: string; required?: boolean }[];
  responses: Record<number, { description: string; schema?: ZodType; headers?: string[] }>;
  /** Problem codes this operation may answer with, beyond the generic ones. */
  errors?: (keyof typeof ERROR_CODES)[];
};

export const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    code: z.string().describe("Stable, machine-readable error code"),
    detail: z.string(),
    errors: z
      .array(z.object({ path: z.string(), code: z.string(), message: z.string(), nodeId: z.string().optional() }))
      .optional(),
  });

function toSchema(schema: ZodType, io: "input" | "output"): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

export function buildOpenApiDocument(operations: OperationSpec[], info: { version: string; serverUrl: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const openApiPath = op.path.replace(/:([A-Za-z_]+)/g, "{$1}");
    const pathParams = [...op.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    const queryParams: unknown[] = [];
    if (op.query) {
      const q = toSchema(op.query, "input") as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, schema] of Object.entries(q.properties ?? {})) {
        queryParams.push({ name, in: "query", required: q.required?.includes(name) ?? false, schema });
      }
    }
    const headerParams = (op.headers ?? []).map((h) => ({
      name: h.name,
      in: "header",
      required: h.required ?? false,
      description: h.description,
      schema: { type: "string" },
    }));
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(op.responses)) {
      responses[status] = {
        description: r.description,
        ...(r.schema ? { content: { "application/json": { schema: toSchema(r.schema, "output") } } } : {}),
      };
    }
    const errorStatuses = new Set<number>((op.errors ?? []).map((c) => ERROR_CODES[c].status));
    if (op.auth) errorStatuses.add(401);
    if (op.body) errorStatuses.add(422);
    for (const status of errorStatuses) {
      const codes = (op.errors ?? []).filter((c) => ERROR_CODES[c].status === status);
      responses[String(status)] ??= {
        description: codes.length ? `Problem: ${codes.join(", ")}` : "Problem",
        content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
      };
    }
    paths[openApiPath] ??= {};
    paths[openApiPath][op.method] = {
      operationId: op.operationId,
      summary: op.summary,
      tags: [op.tag],
      ...(op.auth ? { security: [{ bearerAuth: [] }] } : { security: [] }),
      parameters: [...pathParams, ...queryParams, ...headerParams],
      ...(op.body
        ? {
            requestBody: {
              required: !op.bodyOptional,
              content: { [op.bodyContentType ?? "application/json"]: { schema: toSchema(op.body, "input") } },
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Flowmail API",
      version: info.version,
      description:
        `Workflow automation: upload a CSV, define a graph of ${NODE_TYPES.join(" → ")} nodes, run it, poll the run. Errors are RFC 9457 problem details.`,
    },
    servers: [{ url: info.serverUrl }],
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT" } },
      schemas: { Problem: toSchema(problemSchema, "output") },
    },
  };
}
