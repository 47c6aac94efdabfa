import { describe, expect, it } from "vitest";
import { z } from "zod";
import { GET as health } from "@/app/api/health/route";
import { GET as openapi } from "@/app/api/openapi.json/route";
import { AppError } from "@/lib/errors";
import { ok, route } from "@/lib/http/route";
import { call } from "@/test/support/http";

const echo = route(
  { auth: false, body: z.strictObject({ name: z.string().min(1), count: z.number().int().optional() }) },
  async ({ body }) => ok({ received: body }),
);

const boom = route({ auth: false }, async () => {
  throw new Error("secret database password is hunter2");
});

// What drizzle throws when a concurrent request won a unique index: its "Failed query" wrapper around the driver's error.
const raced = route({ auth: false }, async () => {
  throw new Error("Failed query: insert into senders …", { cause: Object.assign(new Error('duplicate key value violates unique constraint "senders_one_default_key"'), { code: "23505" }) });
});

const thrower = route({ auth: false }, async () => {
  throw new AppError("not_found", "Workflow not found");
});

function expectProblem(res: { status: number; headers: Headers; body: any }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect(res.body).toMatchObject({ type: "about:blank", status, code });
  expect(typeof res.body.title).toBe("string");
  expect(typeof res.body.detail).toBe("string");
}

describe("route wrapper", () => {
  it("passes a valid body through", async () => {
    const res = await call(echo, { json: { name: "a", count: 2 } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: { name: "a", count: 2 } });
  });

  it("answers malformed JSON with 400 malformed_json", async () => {
    const res = await call(echo, { body: '{"name": ', headers: { "content-type": "application/json" } });
    expectProblem(res, 400, "malformed_json");
  });

  it("answers an empty body with 400", async () => {
    const res = await call(echo, { body: "", headers: { "content-type": "application/json" }, method: "POST" });
    expectProblem(res, 400, "malformed_json");
  });

  it("answers a non-JSON content type with 415", async () => {
    const res = await call(echo, { body: "name=a", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expectProblem(res, 415, "unsupported_media_type");
  });

  it("rejects unknown fields with 422 naming the field", async () => {
    const res = await call(echo, { json: { name: "a", nmae: "typo" } });
    expectProblem(res, 422, "validation_failed");
    expect(res.body.errors).toEqual([expect.objectContaining({ path: "nmae", code: "unknown_field" })]);
  });

  it("reports every invalid field", async () => {
    const res = await call(echo, { json: { name: "", count: 1.5 } });
    expectProblem(res, 422, "validation_failed");
    expect(res.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(["count", "name"]);
  });

  it("refuses a 2 MiB body with 413, with or without Content-Length", async () => {
    const big = JSON.stringify({ name: "x".repeat(2 * 1024 * 1024) });
    const withLength = await call(echo, {
      body: big,
      headers: { "content-type": "application/json", "content-length": String(big.length) },
    });
    expectProblem(withLength, 413, "payload_too_large");
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 32; i++) controller.enqueue(new TextEncoder().encode("x".repeat(64 * 1024)));
        controller.close();
      },
    });
    const chunked = await call(echo, { body: stream, headers: { "content-type": "application/json" } });
    expectProblem(chunked, 413, "payload_too_large");
  });

  it("answers an unexpected error with a generic 500 that leaks nothing", async () => {
    const res = await call(boom);
    expectProblem(res, 500, "internal_error");
    expect(res.text).not.toContain("hunter2");
    expect(res.text).not.toContain("at ");
  });

  it("answers a request that lost a race on a unique index with 409 conflict, not a 500", async () => {
    const res = await call(raced);
    expectProblem(res, 409, "conflict");
    expect(res.text).not.toContain("senders_one_default_key");
  });

  it("maps AppError codes to their status", async () => {
    const res = await call(thrower);
    expectProblem(res, 404, "not_found");
    expect(res.body.detail).toBe("Workflow not found");
  });
});

describe("system endpoints", () => {
  it("GET /api/health checks the database", async () => {
    const res = await call(health, { path: "/api/health" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ok", db: "ok" });
  });

  it("GET /api/openapi.json is an OpenAPI 3.1 document", async () => {
    const res = await call(openapi, { path: "/api/openapi.json" });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    expect(res.body.paths["/api/health"].get.operationId).toBe("getHealth");
    expect(res.body.components.schemas.Problem.properties.code).toBeDefined();
  });
});
