import { z, type ZodType } from "zod";
import { NODE_TYPES } from "@/lib/graph/schema";
import type { OperationScope } from "@/lib/schemas/api-keys";
import { ERROR_CODES } from "@/lib/errors";

export type HttpMethod = "get" | "post" | "put" | "patch" | "delete" | "head" | "options";

/**
 * Who may call an operation: no one in particular (`auth: false`), or an authenticated caller — a person's access
 * token or session, and an API key holding `scope` ("person": never an API key). Every authenticated operation must
 * say which, so a new route cannot be reached by keys by accident.
 */
export type OperationAccess =
  | { auth: false; scope?: never; workflowCreating?: never }
  | {
      auth: true;
      scope: OperationScope;
      /** Creates a workflow: refused to a key confined to some workflows. */
      workflowCreating?: true;
    };

export type OperationSpec = OperationAccess & {
  method: HttpMethod;
  /** Express-style path, e.g. `/api/workflows/:workflowId`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
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
    if (op.auth) errorStatuses.add(403);
    if (op.body || op.query) errorStatuses.add(422);
    for (const status of errorStatuses) {
      const codes = (op.errors ?? []).filter((c) => ERROR_CODES[c].status === status);
      if (op.auth && status === 403) codes.push("insufficient_scope");
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
      ...securityOf(op),
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
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "A person's access token (POST /api/auth/login), valid 15 minutes",
        },
        apiKey: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "fmk_…",
          description:
            "An API key (POST /api/account/api-keys), sent as `Authorization: Bearer fmk_…`. Each operation lists the scope it needs; without it the answer is 403 insufficient_scope.",
        },
      },
      schemas: { Problem: toSchema(problemSchema, "output") },
    },
  };
}

/** The security requirement of an operation: either bearer form, the key with the operation's scope. */
function securityOf(op: OperationSpec): Record<string, unknown> {
  if (!op.auth) return { security: [] };
  if (op.scope === "person") return { security: [{ bearer: [] }], "x-person-only": true };
  return { security: [{ bearer: [] }, { apiKey: [op.scope] }], "x-required-scope": op.scope };
}
