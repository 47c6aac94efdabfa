import "server-only";
import type { z, ZodType } from "zod";
import type { AuthenticatedAccount } from "@/lib/auth/authenticate";
import { observeRequest } from "@/lib/observability/http";
import { authorize } from "./authorize";
import { AppError, notFound } from "@/lib/errors";
import { errorResponse, formatPath, zodErrorItems } from "./problem";

export const MAX_JSON_BYTES = 1024 * 1024;

type RouteContext = { params: Promise<Record<string, string | string[] | undefined>> };

type Infer<T> = T extends ZodType ? z.output<T> : undefined;

export type HandlerContext<B, Q, P, A extends boolean> = {
  req: Request;
  url: URL;
  body: Infer<B>;
  query: Infer<Q>;
  params: P extends ZodType ? z.output<P> : Record<string, string>;
  account: A extends true ? AuthenticatedAccount : AuthenticatedAccount | null;
};

export type RouteOptions<B, Q, P, A extends boolean> = {
  /**
   * Require an authenticated account (Bearer access token, API key, or the web session cookie). An API key is held to
   * the scope and workflow confinement its operation declares beside its schemas (lib/schemas/<domain>.ts).
   */
  auth: A;
  body?: B;
  query?: Q;
  params?: P;
  maxBodyBytes?: number;
};

/**
 * The one wrapper every route handler goes through: authentication, JSON body parsing with a size limit,
 * zod validation (unknown fields rejected by strict schemas), and problem+json for every error.
 */
export function route<
  B extends ZodType | undefined = undefined,
  Q extends ZodType | undefined = undefined,
  P extends ZodType | undefined = undefined,
  A extends boolean = boolean,
>(options: RouteOptions<B, Q, P, A>, handler: (ctx: HandlerContext<B, Q, P, A>) => Promise<Response>) {
  // Every request is counted (route pattern, status, duration) and runs with its trace context (observeRequest).
  return (req: Request, context: RouteContext): Promise<Response> => observeRequest(req, context?.params, (url) => handle(req, context, url));
  async function handle(req: Request, context: RouteContext, url: URL): Promise<Response> {
    try {
      const rawParams = (await context?.params) ?? {};
      const params = options.params ? parseOrThrow(options.params, rawParams, []) : rawParams;
      const account = options.auth ? await authorize(req, url.pathname, rawParams) : null;
      // No stored id holds a NUL (PostgreSQL text refuses the byte): answer "unknown id", not a driver error.
      if (Object.values(rawParams).flat().some((v) => typeof v === "string" && v.includes("\u0000"))) throw notFound("Resource");
      const query = options.query
        ? parseOrThrow(options.query, queryValues(url), ["query"])
        : undefined;
      const body = options.body
        ? parseOrThrow(options.body, await readJsonBody(req, options.maxBodyBytes ?? MAX_JSON_BYTES), [])
        : undefined;
      return await handler({ req, url, body, query, params, account } as HandlerContext<B, Q, P, A>);
    } catch (error) {
      return errorResponse(error, { method: req.method, path: url.pathname });
    }
  }
}

function parseOrThrow<T extends ZodType>(schema: T, value: unknown, prefix: (string | number)[]): z.output<T> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new AppError("validation_failed", "The request is not valid: see `errors`.", {
      errors: zodErrorItems(result.error, prefix),
    });
  }
  return result.data;
}

/** Reads a JSON body without ever buffering more than `limit` bytes. */
export async function readJsonBody(req: Request, limit: number): Promise<unknown> {
  const contentType = req.headers.get("content-type") ?? "";
  if (!/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(contentType)) {
    throw new AppError("unsupported_media_type", "Send the body as JSON with `Content-Type: application/json`.");
  }
  const text = await readTextLimited(req, limit);
  if (text.trim() === "") throw new AppError("malformed_json", "The request body is empty: send a JSON object.");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new AppError("malformed_json", `The request body is not valid JSON: ${(error as Error).message}`);
  }
  // PostgreSQL text and jsonb refuse NUL, so a \u0000 would otherwise surface as a driver error (a 500).
  const nulAt = text.includes("\\u0000") ? findNul(value, []) : null;
  if (nulAt) throw nulError(nulAt);
  return value;
}

/** The query string as an object; a NUL (`%00`) in it is refused here, before it can reach the database. */
function queryValues(url: URL): Record<string, string> {
  const values = Object.fromEntries(url.searchParams.entries());
  const nulAt = findNul(values, ["query"]);
  if (nulAt) throw nulError(nulAt);
  return values;
}

function nulError(path: (string | number)[]): AppError {
  return new AppError("validation_failed", "The request is not valid: see `errors`.", {
    errors: [{ path: formatPath(path), code: "invalid_string", message: "NUL characters (\\u0000) are not allowed" }],
  });
}

/** The path of a string or key holding a NUL character, or null. Iterative: bodies may nest deeply. */
function findNul(root: unknown, rootPath: (string | number)[]): (string | number)[] | null {
  const stack: [unknown, (string | number)[]][] = [[root, rootPath]];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value === "string" && value.includes("\u0000")) return path;
    if (typeof value !== "object" || value === null) continue;
    for (const [key, child] of Object.entries(value)) {
      const childPath = [...path, Array.isArray(value) ? Number(key) : key];
      if (key.includes("\u0000")) return childPath;
      stack.push([child, childPath]);
    }
  }
  return null;
}

export async function readTextLimited(req: Request, limit: number): Promise<string> {
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  if (!req.body) return "";
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return new TextDecoder("utf-8", { fatal: false }).decode(Buffer.concat(chunks));
}

function tooLarge(limit: number) {
  return new AppError("payload_too_large", `The request body is larger than ${formatBytes(limit)}.`);
}

export function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${Math.round((n / 1024 / 1024) * 10) / 10} MiB`;
  if (n >= 1024) return `${Math.round((n / 1024) * 10) / 10} KiB`;
  return `${n} bytes`;
}

const jsonHeaders = { "Content-Type": "application/json", "Cache-Control": "no-store" };

export function json(data: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(data), { status, headers: { ...jsonHeaders, ...headers } });
}
export const ok = (data: unknown, headers?: Record<string, string>) => json(data, 200, headers);
export const created = (data: unknown, headers?: Record<string, string>) => json(data, 201, headers);
export const accepted = (data: unknown, headers?: Record<string, string>) => json(data, 202, headers);
export const noContent = () => new Response(null, { status: 204, headers: { "Cache-Control": "no-store" } });
