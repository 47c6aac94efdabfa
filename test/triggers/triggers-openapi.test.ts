import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "@/lib/http/openapi";
import { allOperations } from "@/lib/http/operations";
import { triggerOperations } from "@/lib/schemas/triggers";
import { workflowOperations } from "@/lib/schemas/workflows";

describe("OpenAPI for triggers", () => {
  it("documents the hook routes and the workflow schedule, registered in the shared list", () => {
    const doc = buildOpenApiDocument([...workflowOperations, ...triggerOperations], { version: "test", serverUrl: "http://localhost" });
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(["/api/workflows/{workflowId}/hooks", "/api/workflows/{workflowId}/hooks/{hookId}", "/api/hooks/{token}"]),
    );
    for (const op of triggerOperations) expect(allOperations).toContain(op);
    const deliver = doc.paths["/api/hooks/{token}"].post as { security?: unknown[]; parameters: { name: string }[] };
    expect(deliver.parameters.map((p) => p.name)).toEqual(expect.arrayContaining(["token", "Idempotency-Key", "webhook-id"]));
    const text = JSON.stringify(doc.paths["/api/workflows"]);
    expect(text).toContain("invalid_schedule");
    expect(text).toContain("nextRunAt");
  });
});
