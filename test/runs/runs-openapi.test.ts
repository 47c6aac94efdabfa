import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "@/lib/http/openapi";
import { allOperations } from "@/lib/http/operations";
import { runsOperations } from "@/lib/schemas/runs";

describe("OpenAPI for run control: the runs list, retry and cancel", () => {
  it("documents GET /api/runs, retry and cancel with their failures, registered in the shared list", () => {
    const doc = buildOpenApiDocument(runsOperations, { version: "test", serverUrl: "http://localhost" });
    const paths = doc.paths as Record<string, Record<string, { responses: Record<string, unknown>; parameters?: { name: string }[] }>>;
    expect(Object.keys(paths)).toEqual(
      expect.arrayContaining(["/api/runs", "/api/workflows/runs/{runId}/retry", "/api/workflows/runs/{runId}/cancel"]),
    );
    expect(Object.keys(paths["/api/workflows/runs/{runId}/retry"].post.responses)).toEqual(expect.arrayContaining(["202", "404", "409", "410"]));
    expect(Object.keys(paths["/api/workflows/runs/{runId}/cancel"].post.responses)).toEqual(expect.arrayContaining(["202", "404", "409"]));
    expect((paths["/api/runs"].get.parameters ?? []).map((p) => p.name)).toEqual(expect.arrayContaining(["status", "workflowId", "limit", "cursor"]));
    expect(Object.keys(paths["/api/workflows/runs/{runId}/nodes/{nodeId}/output"].get.responses)).toContain("410");
    for (const op of runsOperations) expect(allOperations).toContain(op);
  });
});
