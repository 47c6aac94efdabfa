import path from "node:path";
import { POST as createKeyHandler } from "@/app/api/account/api-keys/route";
import { allOperations } from "@/lib/http/operations";
import type { OperationSpec } from "@/lib/http/openapi";
import { call, type CallResult } from "@/test/support/http";

type Handler = Parameters<typeof call>[0];

/** Creates a key through the API (as the person `token`), failing the test unless it answers 201. */
export async function createKey(
  token: string,
  body: { name?: string; scopes: string[]; workflowIds?: string[]; expiresInDays?: number },
): Promise<{ id: string; key: string; prefix: string }> {
  const res: CallResult = await call(createKeyHandler, { json: { name: "test key", ...body }, token });
  if (res.status !== 201) throw new Error(`creating a key answered ${res.status}: ${res.text}`);
  return res.body;
}

/** `/api/workflows/:workflowId/run` → app/api/workflows/[workflowId]/run/route.ts */
export function routeFileOf(op: OperationSpec): string {
  const dir = op.path.split("/").filter(Boolean).map((s) => (s.startsWith(":") ? `[${s.slice(1)}]` : s));
  return path.join(process.cwd(), "app", ...dir, "route.ts");
}

/** The handler of a documented operation, loaded from its route file. */
export async function handlerOf(op: OperationSpec): Promise<Handler> {
  const mod = (await import(routeFileOf(op))) as Record<string, unknown>;
  const handler = mod[op.method.toUpperCase()];
  if (typeof handler !== "function") throw new Error(`${op.method} ${op.path}: no handler exported`);
  return handler as Handler;
}

/** Every operation that needs a caller, each with its concrete path for the given parameter values. */
export function authenticatedOperations(): (OperationSpec & { auth: true })[] {
  return allOperations.filter((op): op is OperationSpec & { auth: true } => op.auth);
}

/** The operation's path with its parameters filled in, and the params object Next.js would hand the handler. */
export function concretePath(op: OperationSpec, values: Record<string, string>): { path: string; params: Record<string, string> } {
  const params: Record<string, string> = {};
  const filled = op.path.replace(/:([A-Za-z_]+)/g, (_m, name: string) => {
    // A parameter the caller has no value for gets an id that names nothing (the route then answers 404 or 422).
    const value = values[name] ?? `${name}_unknownunknownunknown`;
    params[name] = value;
    return encodeURIComponent(value);
  });
  return { path: filled, params };
}
