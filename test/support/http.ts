type Handler = (req: Request, ctx: { params: Promise<Record<string, string | string[] | undefined>> }) => Promise<Response>;

export type CallOptions = {
  method?: string;
  path?: string;
  /** A value to send as JSON, or a raw BodyInit (string, FormData, …). */
  json?: unknown;
  body?: BodyInit;
  headers?: Record<string, string>;
  token?: string;
  params?: Record<string, string>;
};

export type CallResult<T = any> = { status: number; headers: Headers; body: T; text: string };

/** Calls a route handler the way Next.js does, without a server. */
export async function call<T = any>(handler: Handler, options: CallOptions = {}): Promise<CallResult<T>> {
  const headers = new Headers(options.headers);
  let body: BodyInit | undefined = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  }
  if (options.token) headers.set("authorization", `Bearer ${options.token}`);
  const req = new Request(`http://localhost:3000${options.path ?? "/"}`, {
    method: options.method ?? (body === undefined ? "GET" : "POST"),
    headers,
    body,
    // @ts-expect-error Node's fetch needs duplex for streamed bodies
    duplex: "half",
  });
  const res = await handler(req, { params: Promise.resolve(options.params ?? {}) });
  const text = await res.text();
  let parsed: unknown = undefined;
  if (text && /json/.test(res.headers.get("content-type") ?? "")) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}
