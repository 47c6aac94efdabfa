// Typed fetch helpers for the browser. The UI is a client of the REST API like any integrator:
// it uses the session cookie (same-origin) and turns problem+json answers into readable errors.

export interface FieldError {
  path: string;
  code: string;
  message: string;
  nodeId?: string;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly title: string;
  readonly errors: FieldError[];
  readonly retryAfter: number | null;

  constructor(init: { status: number; code: string; title: string; detail: string; errors?: FieldError[]; retryAfter?: number | null }) {
    super(init.detail);
    this.name = "ApiError";
    this.status = init.status;
    this.code = init.code;
    this.title = init.title;
    this.errors = init.errors ?? [];
    this.retryAfter = init.retryAfter ?? null;
  }

  /** The message for the field whose path ends with `field` (e.g. "email" matches "body.email"). */
  fieldError(field: string): string | undefined {
    return this.errors.find((e) => e.path === field || e.path.endsWith(`.${field}`))?.message;
  }
}

/** Reads a human sentence out of any error thrown by the helpers (or anything else). */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.message || error.title;
  if (error instanceof Error) return error.message;
  return "Something went wrong.";
}

export async function toApiError(res: Response): Promise<ApiError> {
  const retryAfterHeader = res.headers.get("retry-after");
  const retryAfter = retryAfterHeader ? Number(retryAfterHeader) : null;
  let body: Record<string, unknown> = {};
  try {
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    // Not JSON (a proxy error page, an empty 404): fall back to the status text below.
  }
  const title = typeof body.title === "string" ? body.title : res.statusText || "Request failed";
  const detail = typeof body.detail === "string" ? body.detail : defaultDetail(res.status, title);
  return new ApiError({
    status: res.status,
    code: typeof body.code === "string" ? body.code : `http_${res.status}`,
    title,
    detail,
    errors: Array.isArray(body.errors) ? (body.errors as FieldError[]) : [],
    retryAfter: Number.isFinite(retryAfter) ? retryAfter : null,
  });
}

function defaultDetail(status: number, title: string): string {
  if (status === 401) return "Your session has ended. Sign in again.";
  if (status === 404) return "Not found.";
  if (status >= 500) return "The server could not complete the request. Try again in a moment.";
  return title;
}

type Json = Record<string, unknown> | unknown[];

export interface RequestOptions {
  method?: string;
  json?: unknown;
  body?: BodyInit;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export async function apiFetch<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json", ...options.headers };
  let body = options.body;
  if (options.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(options.json);
  }
  const res = await fetch(path, {
    method: options.method ?? (body ? "POST" : "GET"),
    headers,
    body,
    credentials: "same-origin",
    signal: options.signal,
  });
  if (!res.ok) throw await toApiError(res);
  if (res.status === 204 || res.headers.get("content-length") === "0") return undefined as T;
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

export const api = {
  get: <T>(path: string, signal?: AbortSignal) => apiFetch<T>(path, { signal }),
  post: <T>(path: string, json?: Json | object, headers?: Record<string, string>) =>
    apiFetch<T>(path, { method: "POST", json: json ?? {}, headers }),
  postEmpty: <T>(path: string, headers?: Record<string, string>) => apiFetch<T>(path, { method: "POST", headers }),
  patch: <T>(path: string, json: Json | object) => apiFetch<T>(path, { method: "PATCH", json }),
  put: <T>(path: string, json: Json | object) => apiFetch<T>(path, { method: "PUT", json }),
  del: (path: string) => apiFetch<void>(path, { method: "DELETE" }),
};

export function qs(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== "") search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : "";
}
