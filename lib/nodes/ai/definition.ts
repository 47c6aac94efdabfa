// AI's client-safe half: asks the account's AI provider for the declared output fields.
import { FORBIDDEN_KEYS, IDENTIFIER_PATTERN, defineNode, nonEmpty, text, type FormField, type Zod } from "../node-definition";

export const AI_OUTPUT_TYPES = ["string", "number", "integer", "boolean", "array", "object"] as const;
export type AiOutputType = (typeof AI_OUTPUT_TYPES)[number];

/** Names the node's own output uses beside the declared fields (a single call's output is `{ ...fields, usage }`). */
export const AI_RESERVED_OUTPUTS: readonly string[] = ["usage"];

/** What a node with `forEach` outputs: the items with their declared fields added, and its counts. */
export const AI_FOR_EACH_OUTPUTS = ["items", "count", "failed", "usage"] as const;

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
    /** One call per element of this list (a lone template, like OUTPUT's); absent: one call. */
    forEach: nonEmpty(zod, "forEach").optional(),
    onItemError: zod.enum(["fail", "skip"]).optional(),
    /** "batch": the provider's batch API (OpenAI, Anthropic) answers the items, at half price, within 24 h. */
    mode: zod.enum(["sync", "batch"]).optional(),
    maxCostUsd: zod.number().positive("maxCostUsd must be more than 0").max(1_000_000, "maxCostUsd must be at most 1,000,000").optional(),
    reuseAnswersDays: zod.number().int("reuseAnswersDays must be a whole number of days").min(1).max(30).optional(),
  })
  .superRefine((data, ctx) => {
    if (data.mode === "batch" && !data.forEach) {
      ctx.addIssue({ code: "custom", path: ["mode"], message: "Batch mode sends the items of forEach to the provider's batch API: set forEach, or use \"sync\" for one call" });
    }
    // The single call's output is the declared fields beside `usage`; with forEach they go on each item.
    data.output.forEach((field, index) => {
      if (!data.forEach && AI_RESERVED_OUTPUTS.includes(field.name)) {
        ctx.addIssue({ code: "custom", path: ["output", index, "name"], message: `"${field.name}" is reserved: the node's output has its own ${field.name}` });
      }
    });
  });

const MODEL_SETTINGS = "Model settings";

/** An optional select of the model settings: `choices` maps each value to its label, in the order shown. */
const modelSettingChoice = (name: string, label: string, choices: Record<string, string>): FormField => ({
  name,
  label,
  kind: "select",
  optional: true,
  section: MODEL_SETTINGS,
  options: Object.entries(choices).map(([value, choiceLabel]) => ({ value, label: choiceLabel })),
});

export const aiDefinition = defineNode({
  type: "AI",
  dataSchema: buildAiDataSchema,
  label: "AI",
  description: "Ask a model for structured fields",
  docs:
    "Asks the account's AI provider; `prompt` may hold templates. Once: one call, output = one field per declared output (string, number, integer, boolean, array, object) and `usage`. " +
    "With `forEach` (a list): one call per element, `{{item.…}}` in prompt and system; output `{ items, count, failed, usage }`, each item the element with the declared fields added. " +
    "`mode` sync|batch (batch: the provider's batch API, OpenAI or Anthropic, half price, answers within 24 h). `onItemError` fail|skip, `maxCostUsd`, `reuseAnswersDays` (1–30). `usage` is `{ calls, inputTokens, outputTokens, costUsd }`.",
  idPrefix: "ai",
  accent: "bg-fuchsia-100 text-fuchsia-700",
  defaultData: () => ({ prompt: "", output: [{ name: "summary", type: "string" }] }),
  outputFields: (data) =>
    typeof data.forEach === "string" && data.forEach
      ? [...AI_FOR_EACH_OUTPUTS]
      : [...(Array.isArray(data.output) ? data.output.map((o: { name?: string } | null) => o?.name ?? "").filter(Boolean) : []), "usage"],
  hasInput: true,
  summary: (data) => text(data.prompt) || "Write a prompt",
  form: [
    { name: "forEach", label: "For each", kind: "template", template: "lone", optional: true, placeholder: "{{src.rows}}", help: "Empty: one call. A list: one call per element, with {{item.…}} in the prompt." },
    { name: "prompt", label: "Prompt", kind: "template", template: "item", multiline: true, rows: 5, help: "Type {{ to insert fields of upstream nodes." },
    { name: "output", label: "Declared outputs", kind: "ai-outputs" },
    { name: "model", label: "Model", kind: "text", help: "Empty: the model from your AI provider settings.", section: MODEL_SETTINGS, optional: true },
    { name: "system", label: "System prompt", kind: "textarea", template: "item", rows: 2, section: MODEL_SETTINGS, optional: true },
    { name: "temperature", label: "Temperature", kind: "number", min: 0, max: 2, step: 0.1, section: MODEL_SETTINGS, optional: true },
    modelSettingChoice("onItemError", "When an item fails", { fail: "Fail the node", skip: "Leave the item out" }),
    modelSettingChoice("mode", "How the items are asked", { sync: "Now, paced to your limits", batch: "Batch API: half price, within 24 h (OpenAI, Anthropic)" }),
    { name: "maxCostUsd", label: "Spend cap per run (USD)", kind: "number", min: 0, step: 0.01, section: MODEL_SETTINGS, optional: true },
    { name: "reuseAnswersDays", label: "Reuse identical answers (days)", kind: "number", min: 1, max: 30, step: 1, section: MODEL_SETTINGS, optional: true },
  ],
});
