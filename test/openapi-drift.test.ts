// The OpenAPI document (lib/http/operations.ts) and the route handlers under app/api must not drift apart: every
// method a route file exports is documented, and every documented operation has its handler. Read from the files'
// source, so the test needs no server and loads no route.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { allOperations } from "@/lib/http/operations";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const;

/** Routes that are not part of the public API, each with its reason. */
const UNDOCUMENTED: Record<string, string> = {
  "/api/nextauth/*": "next-auth's own endpoints for the web UI's browser session (csrf, callback, session, signout)",
  "/api/inngest": "the Inngest SDK's serve() endpoint, called by Inngest itself",
};

function routeFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const file = path.join(dir, entry);
    if (statSync(file).isDirectory()) return routeFiles(file);
    return entry === "route.ts" ? [file] : [];
  });
}

/** app/api/workflows/[workflowId]/route.ts → /api/workflows/:workflowId (a catch-all [...x] → *). */
function routePath(file: string): string {
  const dir = path.relative(path.resolve("app"), path.dirname(file)).split(path.sep);
  return "/" + dir.map((part) => (part.startsWith("[...") ? "*" : part.replace(/^\[(.+)\]$/, ":$1"))).join("/");
}

/** The HTTP methods a route file exports: `export const GET =`, `export async function GET(`, `export const { GET, POST } =`, `export { GET } from`. */
function exportedMethods(source: string): string[] {
  const names = new Set<string>();
  for (const m of source.matchAll(/export\s+(?:const|let|var|(?:async\s+)?function)\s+([A-Z]+)\b/g)) names.add(m[1]);
  for (const m of source.matchAll(/export\s+(?:const|let|var)\s*\{([^}]*)\}\s*=/g)) {
    for (const part of m[1].split(",")) names.add(part.split(":").pop()!.trim());
  }
  for (const m of source.matchAll(/export\s*\{([^}]*)\}/g)) {
    for (const part of m[1].split(",")) names.add(part.split(/\s+as\s+/).pop()!.trim());
  }
  return METHODS.filter((method) => names.has(method));
}

const handlers = routeFiles(path.resolve("app/api")).map((file) => ({
  file: path.relative(process.cwd(), file),
  path: routePath(file),
  methods: exportedMethods(readFileSync(file, "utf8")),
}));
const key = (method: string, routePathName: string) => `${method.toUpperCase()} ${routePathName}`;

describe("OpenAPI document and route handlers", () => {
  it("finds the route handlers (the scan itself works)", () => {
    expect(handlers.length).toBeGreaterThan(20);
    const unreadable = handlers.filter((h) => h.methods.length === 0).map((h) => h.file);
    expect(unreadable, "route files whose exported methods this test cannot read").toEqual([]);
  });

  it("documents every method that a route file exports", () => {
    const documented = new Set(allOperations.map((op) => key(op.method, op.path)));
    const missing = handlers
      .filter((h) => !(h.path in UNDOCUMENTED))
      .flatMap((h) => h.methods.map((method) => key(method, h.path)))
      .filter((operation) => !documented.has(operation));
    expect(missing, "handlers missing from lib/http/operations.ts").toEqual([]);
  });

  it("has a handler for every documented operation", () => {
    const served = new Set(handlers.flatMap((h) => h.methods.map((method) => key(method, h.path))));
    const orphans = allOperations.map((op) => key(op.method, op.path)).filter((operation) => !served.has(operation));
    expect(orphans, "documented operations without a route handler").toEqual([]);
  });

  it("keeps its list of undocumented routes to routes that exist", () => {
    const paths = new Set(handlers.map((h) => h.path));
    expect(Object.keys(UNDOCUMENTED).filter((p) => !paths.has(p))).toEqual([]);
  });
});
