import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "@/lib/http/openapi";
import { allOperations } from "@/lib/http/operations";
import { uploadOperations } from "@/lib/schemas/uploads";
import { workflowOperations } from "@/lib/schemas/workflows";

describe("OpenAPI for uploads and workflows", () => {
  it("documents every operation, registered in the shared list", () => {
    const doc = buildOpenApiDocument([...uploadOperations, ...workflowOperations], { version: "test", serverUrl: "http://localhost" });
    expect(Object.keys(doc.paths).sort()).toEqual([
      "/api/schemas/graph",
      "/api/uploads",
      "/api/uploads/tus",
      "/api/uploads/tus/{tusId}",
      "/api/uploads/{uploadId}",
      "/api/uploads/{uploadId}/rows",
      "/api/workflows",
      "/api/workflows/validate",
      "/api/workflows/{workflowId}",
      "/api/workflows/{workflowId}/duplicate",
      "/api/workflows/{workflowId}/versions",
      "/api/workflows/{workflowId}/versions/{version}",
    ]);
    const upload = doc.paths["/api/uploads"].post as { requestBody: { content: Record<string, unknown> } };
    expect(Object.keys(upload.requestBody.content)).toEqual(["multipart/form-data"]);
    const create = doc.paths["/api/workflows"].post as { requestBody: { content: { "application/json": { schema: { properties: Record<string, unknown> } } } } };
    expect(Object.keys(create.requestBody.content["application/json"].schema.properties)).toEqual(["name", "graph", "schedule"]);
    for (const op of [...uploadOperations, ...workflowOperations]) expect(allOperations).toContain(op);
  });
});

describe("GET /api/openapi.json servers", () => {
  it("advertises the address the request reached when APP_URL is not set, and APP_URL when it is", async () => {
    const { GET } = await import("@/app/api/openapi.json/route");
    const { resetConfig } = await import("@/lib/config");
    const fetchDoc = async (url: string) => (await (await GET(new Request(url), { params: Promise.resolve({}) })).json()) as { servers: { url: string }[] };
    delete process.env.APP_URL;
    resetConfig();
    expect((await fetchDoc("http://localhost:3210/api/openapi.json")).servers).toEqual([{ url: "http://localhost:3210" }]);
    process.env.APP_URL = "https://flows.example.com/";
    resetConfig();
    try {
      expect((await fetchDoc("http://localhost:3210/api/openapi.json")).servers).toEqual([{ url: "https://flows.example.com" }]);
    } finally {
      delete process.env.APP_URL;
      resetConfig();
    }
  });
});
