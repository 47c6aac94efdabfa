// Validation messages people read are sentences, not zod's internal wording.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { zodErrorItems } from "@/lib/http/problem";

const messages = (schema: z.ZodType, value: unknown) => {
  const parsed = schema.safeParse(value);
  if (parsed.success) throw new Error("expected a failure");
  return zodErrorItems(parsed.error).map((e) => e.message);
};

describe("validation messages", () => {
  it("turns zod's defaults into sentences and keeps a schema's own words", () => {
    expect(messages(z.object({ name: z.string().min(1) }), { name: "" })).toEqual(["This cannot be empty."]);
    expect(messages(z.object({ name: z.string().min(3) }), { name: "ab" })).toEqual(["Use at least 3 characters."]);
    expect(messages(z.object({ name: z.string().max(2) }), { name: "abc" })).toEqual(["Use at most 2 characters."]);
    expect(messages(z.object({ name: z.string() }), {})).toEqual(["This is required."]);
    expect(messages(z.object({ n: z.number() }), { n: "x" })).toEqual(["This must be a number."]);
    expect(messages(z.object({ name: z.string().min(1, "Enter your name") }), { name: "" })).toEqual(["Enter your name"]);
    for (const m of messages(z.object({ a: z.array(z.string()).min(1), b: z.string().min(1) }), { a: [], b: "" })) {
      expect(m).not.toMatch(/Too small|expected|>=/);
    }
  });
});
