import { z } from "zod";

export type DeclaredOutput = { name: string; type: "string" | "number" | "integer" | "boolean" | "array" | "object"; description?: string };

/** Declared AI outputs → a zod object (the JSON schema sent to the model, and the validator of its answer). */
export function outputSchema(outputs: DeclaredOutput[]): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const output of outputs) {
    let field: z.ZodType;
    switch (output.type) {
      case "string":
        field = z.string();
        break;
      case "number":
        field = z.number();
        break;
      case "integer":
        field = z.number().int();
        break;
      case "boolean":
        field = z.boolean();
        break;
      case "array":
        field = z.array(z.unknown());
        break;
      case "object":
        field = z.record(z.string(), z.unknown());
        break;
    }
    shape[output.name] = output.description ? field.describe(output.description) : field;
  }
  return z.object(shape);
}
