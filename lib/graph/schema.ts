// The workflow graph's shape (CONTRACT.md section 4). Client-safe: the React editor imports this file, so it
// depends on zod only. Semantic rules (cycles, reachability, template references…) live in validate.ts.
import { z } from "zod";

export const NODE_TYPES = ["TRIGGER", "DATA_SOURCE", "AI", "FILTER", "OUTPUT"] as const;
export type NodeType = (typeof NODE_TYPES)[number];

export const AI_OUTPUT_TYPES = ["string", "number", "integer", "boolean", "array", "object"] as const;
export type AiOutputType = (typeof AI_OUTPUT_TYPES)[number];

export const EMAIL_FORMATS = ["text", "html"] as const;

export const NODE_ID_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,31}$/;

/**
 * Ids a node may not take. `item` is the contract's per-element root in templates and expressions, and
 * `unsubscribeUrl` is reserved like it (OUTPUT bodies may write {{unsubscribeUrl}}, CONTRACT 11). `__proto__`,
 * `constructor` and `prototype` are refused because engines and UIs key plain objects by node id, and
 * `obj["__proto__"] = …` would replace a prototype instead of storing an output.
 */
export const RESERVED_NODE_IDS: readonly string[] = ["item", "unsubscribeUrl", "__proto__", "constructor", "prototype"];

/** Keys that never name a field anywhere (AI output names); path lookups are own-property only anyway. */
export const FORBIDDEN_KEYS: readonly string[] = ["__proto__", "constructor", "prototype"];

const IDENTIFIER_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export const nodeIdSchema = z
  .string()
  .regex(NODE_ID_PATTERN, "Node ids start with a letter or _ and use only letters, digits and _ (at most 32)")
  .refine((id) => !RESERVED_NODE_IDS.includes(id), { message: "This node id is reserved" });

const nonEmpty = (what: string) => z.string().min(1, `${what} must not be empty`);

export const triggerDataSchema = z.strictObject({});

export const dataSourceDataSchema = z.union(
  [z.strictObject({ uploadId: nonEmpty("uploadId") }), z.strictObject({ driveFileId: nonEmpty("driveFileId") })],
  { error: "DATA_SOURCE data must be exactly one of { uploadId } or { driveFileId }, a non-empty string" },
);

export const aiOutputFieldSchema = z.strictObject({
  name: z
    .string()
    .regex(IDENTIFIER_PATTERN, "Output names start with a letter or _ and use only letters, digits and _")
    .refine((name) => !FORBIDDEN_KEYS.includes(name), { message: "This output name is reserved" }),
  type: z.enum(AI_OUTPUT_TYPES),
  description: z.string().optional(),
});

export const aiDataSchema = z.strictObject({
  prompt: nonEmpty("prompt"),
  output: z
    .array(aiOutputFieldSchema)
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
  model: nonEmpty("model").optional(),
  system: z.string().optional(),
  temperature: z.number().min(0).max(2).optional(),
});

export const filterDataSchema = z.strictObject({
  source: nonEmpty("source"),
  expr: nonEmpty("expr"),
});

export const outputDataSchema = z.strictObject({
  forEach: nonEmpty("forEach"),
  to: nonEmpty("to"),
  subject: nonEmpty("subject"),
  body: z.string(),
  format: z.enum(EMAIL_FORMATS).optional(),
  /** false: send to every item, repeated addresses included (CONTRACT 11, "Recipients"). */
  dedupe: z.boolean().optional(),
  /** false: transactional mail, without List-Unsubscribe headers. */
  unsubscribe: z.boolean().optional(),
});

export const nodeDataSchemas = {
  TRIGGER: triggerDataSchema,
  DATA_SOURCE: dataSourceDataSchema,
  AI: aiDataSchema,
  FILTER: filterDataSchema,
  OUTPUT: outputDataSchema,
} satisfies { [K in NodeType]: z.ZodType };

export const positionSchema = z.strictObject({ x: z.number(), y: z.number() });

function nodeSchema<T extends NodeType, D extends z.ZodType>(type: T, data: D) {
  return z.strictObject({ id: nodeIdSchema, type: z.literal(type), data, position: positionSchema.optional() });
}

export const graphNodeSchema = z.discriminatedUnion("type", [
  nodeSchema("TRIGGER", triggerDataSchema),
  nodeSchema("DATA_SOURCE", dataSourceDataSchema),
  nodeSchema("AI", aiDataSchema),
  nodeSchema("FILTER", filterDataSchema),
  nodeSchema("OUTPUT", outputDataSchema),
]);

export const graphEdgeSchema = z.strictObject({
  source: z.string(),
  target: z.string(),
  condition: z.string().optional(),
});

export const MAX_NODES = 200;
export const MAX_EDGES = 1000;

export const graphSchema = z.strictObject({
  nodes: z.array(graphNodeSchema).max(MAX_NODES),
  edges: z.array(graphEdgeSchema).max(MAX_EDGES),
});

export type Graph = z.infer<typeof graphSchema>;
export type GraphNode = z.infer<typeof graphNodeSchema>;
export type GraphEdge = z.infer<typeof graphEdgeSchema>;
export type Position = z.infer<typeof positionSchema>;
export type TriggerData = z.infer<typeof triggerDataSchema>;
export type DataSourceData = z.infer<typeof dataSourceDataSchema>;
export type AiOutputField = z.infer<typeof aiOutputFieldSchema>;
export type AiData = z.infer<typeof aiDataSchema>;
export type FilterData = z.infer<typeof filterDataSchema>;
export type OutputData = z.infer<typeof outputDataSchema>;
export type NodeOfType<T extends NodeType> = Extract<GraphNode, { type: T }>;

/** The graph's JSON Schema (draft 2020-12) for the editor and for integrators. */
export function graphJsonSchema(): object {
  return z.toJSONSchema(graphSchema);
}
