import type { OperationAccess } from "./openapi";
import { allOperations } from "./operations";

type Matcher = { pattern: RegExp; staticSegments: number; access: OperationAccess };

/** Every documented operation by method, its path as a pattern; built once. */
let byMethod: Map<string, Matcher[]> | undefined;

function matchers(): Map<string, Matcher[]> {
  if (byMethod) return byMethod;
  byMethod = new Map();
  for (const op of allOperations) {
    const segments = op.path.split("/").filter(Boolean);
    const pattern = new RegExp(
      "^/" + segments.map((s) => (s.startsWith(":") ? "[^/]+" : s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("/") + "/?$",
    );
    const list = byMethod.get(op.method.toUpperCase()) ?? [];
    list.push({ pattern, staticSegments: segments.filter((s) => !s.startsWith(":")).length, access: op as OperationAccess });
    byMethod.set(op.method.toUpperCase(), list);
  }
  // A literal segment wins over a parameter (`/api/workflows/runs/…` before `/api/workflows/:workflowId/…`), as in
  // Next's own routing.
  for (const list of byMethod.values()) list.sort((a, b) => b.staticSegments - a.staticSegments);
  return byMethod;
}

/**
 * Who may call `method pathname`, from the operation that documents it (its `scope` beside its schemas), or null for
 * an undocumented route — which an API key is then refused.
 */
export function operationAccess(method: string, pathname: string): OperationAccess | null {
  const list = matchers().get(method.toUpperCase()) ?? (method.toUpperCase() === "HEAD" ? matchers().get("GET") : undefined);
  return list?.find((m) => m.pattern.test(pathname))?.access ?? null;
}
