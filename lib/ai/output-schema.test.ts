import { describe, expect, it } from "vitest";
import { outputSchema } from "./output-schema";

describe("declared AI outputs → schema", () => {
  const schema = outputSchema([
    { name: "summary", type: "string" },
    { name: "score", type: "integer", description: "1 to 5" },
    { name: "ok", type: "boolean" },
    { name: "people", type: "array" },
    { name: "meta", type: "object" },
    { name: "ratio", type: "number" },
  ]);

  it("accepts an answer of the declared types and rejects others", () => {
    const good = { summary: "s", score: 4, ok: true, people: [{ email: "a@example.com" }], meta: { a: 1 }, ratio: 0.5 };
    expect(schema.parse(good)).toEqual(good);
    expect(schema.safeParse({ ...good, score: 4.5 }).success).toBe(false);
    expect(schema.safeParse({ ...good, people: "x" }).success).toBe(false);
    const { summary: _summary, ...missing } = good;
    expect(schema.safeParse(missing).success).toBe(false);
  });

  it("becomes a JSON schema with every output required and descriptions kept", async () => {
    const { z } = await import("zod");
    const json = z.toJSONSchema(schema) as { required: string[]; properties: Record<string, { type: string; description?: string }> };
    expect(json.required).toEqual(["summary", "score", "ok", "people", "meta", "ratio"]);
    expect(json.properties.score).toMatchObject({ type: "integer", description: "1 to 5" });
  });
});
