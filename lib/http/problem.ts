import { ZodError } from "zod";
import { databaseErrorCode, isDatabaseUnavailable } from "@/db/connection-errors";
import { log } from "@/lib/log";
import { AppError, ERROR_CODES, type ErrorCode, type ErrorItem } from "@/lib/errors";

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

export function problem(
  code: ErrorCode,
  detail: string,
  init: { errors?: ErrorItem[]; headers?: Record<string, string>; extensions?: Record<string, unknown>; instance?: string } = {},
): Response {
  const { status, title } = ERROR_CODES[code];
  const body: Record<string, unknown> = { type: "about:blank", title, status, code, detail };
  if (init.instance) body.instance = init.instance;
  if (init.errors) body.errors = init.errors;
  if (init.extensions) Object.assign(body, init.extensions);
  const headers = new Headers(init.headers);
  headers.set("Content-Type", PROBLEM_CONTENT_TYPE);
  headers.set("Cache-Control", "no-store");
  if (status === 401 && !headers.has("WWW-Authenticate")) {
    headers.set("WWW-Authenticate", code === "unauthorized" ? "Bearer" : `Bearer error="invalid_token"`);
  }
  return new Response(JSON.stringify(body), { status, headers });
}

/** zod issues → contract error items (`path` like `graph.nodes[2].data.expr`). */
export function zodErrorItems(error: ZodError, prefix: (string | number)[] = []): ErrorItem[] {
  return error.issues.map((issue) => {
    const fullPath = [...prefix, ...issue.path];
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({
        path: formatPath([...fullPath, key]),
        code: "unknown_field",
        message: `Unknown field "${key}"`,
      }));
    }
    return [{ path: formatPath(fullPath), code: issue.code === "custom" ? "invalid_value" : issue.code, message: readableMessage(issue) }];
  }).flat();
}

/**
 * zod's own wording ("Too small: expected string to have >=1 characters") reaches people through forms: the common
 * default messages become sentences. A message a schema wrote itself is kept as it is.
 */
function readableMessage(issue: ZodError["issues"][number]): string {
  const raw = issue.message;
  if (issue.code === "too_small" && /^Too small/.test(raw)) {
    const min = Number(issue.minimum);
    if (issue.origin === "string") return min <= 1 ? "This cannot be empty." : `Use at least ${min} characters.`;
    if (issue.origin === "array" || issue.origin === "set") return min <= 1 ? "Add at least one." : `Add at least ${min}.`;
    return `Use ${min} or more.`;
  }
  if (issue.code === "too_big" && /^Too big/.test(raw)) {
    const max = Number(issue.maximum);
    if (issue.origin === "string") return `Use at most ${max} characters.`;
    if (issue.origin === "array" || issue.origin === "set") return `Use at most ${max} entries.`;
    return `Use ${max} or less.`;
  }
  if (issue.code === "invalid_type" && /^Invalid input: expected/.test(raw)) {
    return /received undefined$/.test(raw) ? "This is required." : `This must be ${article(issue.expected)}.`;
  }
  return raw;
}

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

export function formatPath(parts: readonly PropertyKey[]): string {
  let out = "";
  for (const part of parts) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

/** The one place that turns anything thrown into a response. Unknown errors are logged and answered generically. */
export function errorResponse(error: unknown, context: { method?: string; path?: string } = {}): Response {
  if (error instanceof AppError) {
    return problem(error.code, error.message, { errors: error.errors, headers: error.headers, extensions: error.extensions });
  }
  if (error instanceof ZodError) {
    return problem("validation_failed", "The request is not valid.", { errors: zodErrorItems(error) });
  }
  if (isDatabaseUnavailable(error)) {
    log.warn("database unavailable", { ...context, error });
    return problem("service_unavailable", "The database cannot be reached right now: retry in a few seconds.", {
      headers: { "Retry-After": "5" },
    });
  }
  // Two requests that changed the same thing at the same moment (a unique index, a serialization failure or a
  // deadlock between them): the loser is told to retry instead of getting a 500.
  const code = databaseErrorCode(error);
  if (code === "23505" || code === "40001" || code === "40P01") {
    log.warn("concurrent change refused by the database", { ...context, code });
    return problem("conflict", "Another request changed the same thing at the same moment: retry the request.");
  }
  log.error("unhandled error", { ...context, error });
  return problem("internal_error", "Something went wrong on our side. It has been logged; please try again.");
}
