// AI's client-safe half: asks the account's AI provider for the declared output fields.
import { FORBIDDEN_KEYS, IDENTIFIER_PATTERN, defineNode, nonEmpty, text, type Zod } from "../node-definition";

export const AI_OUTPUT_TYPES = ["string", "number", "integer", "boolean", "array", "object"] as const;
export type AiOutputType = (typeof AI_OUTPUT_TYPES)[number];

export const buildAiOutputFieldSchema = (zod: Zod) =>
  zod.strictObject({
    name: zod
      .string()
      .regex(IDENTIFIER_PATTERN, "Output names start with a letter or _ and use only letters, digits and _")
      .refine((name) => !FORBIDDEN_KEYS.includes(name), { message: "This output name is reserved" }),
    type: zod.enum(AI_OUTPUT_TYPES),
    description: zod.string().optional(),
  });

export const buildAiDataSchema = (zod: Zod) =>
  zod.strictObject({
    prompt: nonEmpty(zod, "prompt"),
    output: zod
      .array(buildAiOutputFieldSchema(zod))
      .min(1, "Declare at least one output field")
      .superRefine((fields, ctx) => {
        const seen = new Set<string>();
        fields.forEach((field, index) => {
          if (seen.has(field.name)) {
            ctx.addIssue({ code: "custom", path: [index, "name"], message: `Output name "${field.name}" is declared twice` });
          }
          seen.add(field.name);
        });
      }),
    model: nonEmpty(zod, "model").optional(),
    system: zod.string().optional(),
    temperature: zod.number().min(0).max(2).optional(),
  });

const MODEL_SETTINGS = "Model settings";

export const aiDefinition = defineNode({
  type: "AI",
  dataSchema: buildAiDataSchema,
  label: "AI",
  description: "Ask a model for structured fields",
  docs: "Asks the account's AI provider; `prompt` may hold templates. Output: one field per declared output (string, number, integer, boolean, array, object).",
  idPrefix: "ai",
  accent: "bg-fuchsia-100 text-fuchsia-700",
  defaultData: () => ({ prompt: "", output: [{ name: "summary", type: "string" }] }),
  outputFields: (data) =>
    Array.isArray(data.output) ? data.output.map((o: { name?: string } | null) => o?.name ?? "").filter(Boolean) : [],
  hasInput: true,
  summary: (data) => text(data.prompt) || "Write a prompt",
  form: [
    { name: "prompt", label: "Prompt", kind: "template", template: "text", multiline: true, rows: 5, help: "Type {{ to insert fields of upstream nodes." },
    { name: "output", label: "Declared outputs", kind: "ai-outputs" },
    { name: "model", label: "Model", kind: "text", help: "Empty: the model from your AI provider settings.", section: MODEL_SETTINGS, optional: true },
    { name: "system", label: "System prompt", kind: "textarea", template: "text", rows: 2, section: MODEL_SETTINGS, optional: true },
    { name: "temperature", label: "Temperature", kind: "number", min: 0, max: 2, step: 0.1, section: MODEL_SETTINGS, optional: true },
  ],
});
