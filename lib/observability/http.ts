/*
 * The API's request metrics and trace context, applied by the one route wrapper (lib/http/route.ts) around every
 * handler.
 */
import { metrics } from "./metrics";
import { withRequestTraceparent } from "./trace-context";

type Params = Record<string, string | string[] | undefined>;

/**
 * The route's pattern from the request path and its parameters: `/api/workflows/wf_1/run` with `{ workflowId: "wf_1" }`
 * becomes `/api/workflows/[workflowId]/run`. A metric label must never carry an id, so every path segment a parameter
 * filled is replaced by its name (a catch-all's segments by `[...name]`).
 */
export function routePattern(pathname: string, params: Params): string {
  const segments = pathname.split("/");
  const matches = (i: number, value: string) => segments[i] === value || safeDecode(segments[i]) === value;
  for (const [name, value] of Object.entries(params)) {
    const values = Array.isArray(value) ? value : typeof value === "string" ? [value] : [];
    if (values.length === 0 || values.some((v) => v === "")) continue;
    // The last place the parameter's segments appear (parameters sit after the fixed part of a route).
    for (let i = segments.length - values.length; i >= 0; i--) {
      if (values.every((v, k) => matches(i + k, v))) {
        segments.splice(i, values.length, Array.isArray(value) ? `[...${name}]` : `[${name}]`);
        break;
      }
    }
  }
  return segments.join("/");
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Runs a handler with the request's `traceparent` at hand (an enqueue keeps it with the run) and counts the request
 * by route pattern, method and status with its duration.
 */
export async function observeRequest(req: Request, params: Promise<Params> | undefined, handle: (url: URL) => Promise<Response>): Promise<Response> {
  const started = performance.now();
  const url = new URL(req.url);
  let status = 500;
  try {
    const response = await withRequestTraceparent(req.headers.get("traceparent"), () => handle(url));
    status = response.status;
    return response;
  } finally {
    const resolved = (await params?.catch(() => undefined)) ?? {};
    metrics.httpRequest(routePattern(url.pathname, resolved), req.method, status, (performance.now() - started) / 1000);
  }
}
