// The workflow graph's shape. Client-safe: depends on zod and the node definitions only
// (the editor imports its types; its values would bring zod into the editor's bundle). Semantic rules (cycles, reachability, template references…) live in validate.ts.
import { z } from "zod";
import { NODE_TYPES, nodeDefinitions, type NodeDefinitions } from "@/lib/nodes/definitions";
import { FORBIDDEN_KEYS, type Zod } from "@/lib/nodes/node-definition";
import { AI_OUTPUT_TYPES, buildAiOutputFieldSchema } from "@/lib/nodes/ai/definition";
import { EMAIL_FORMATS } from "@/lib/nodes/output/definition";
import { NODE_ID_PATTERN, RESERVED_NODE_IDS } from "./node-ids";

// The node types and their data schemas come from the definitions (lib/nodes/<type>/definition.ts, listed in
// lib/nodes/definitions.ts); this file builds the schemas with zod, once, and assembles the graph's. Exported under
// the names the code has always used.
export { AI_OUTPUT_TYPES, EMAIL_FORMATS, FORBIDDEN_KEYS, NODE_ID_PATTERN, NODE_TYPES, RESERVED_NODE_IDS };
export type { AiOutputType } from "@/lib/nodes/ai/definition";
export type NodeType = (typeof NODE_TYPES)[number];

export const nodeIdSchema = z
  .string()
  .regex(NODE_ID_PATTERN, "Node ids start with a letter or _ and use only letters, digits and _ (at most 32)")
  .refine((id) => !RESERVED_NODE_IDS.includes(id), { message: "This node id is reserved" });

type DefinitionOf<T extends NodeType> = Extract<NodeDefinitions[number], { type: T }>;
type BuiltSchema<D> = D extends { dataSchema: (zod: Zod) => infer S extends z.ZodType } ? S : never;

/** Each type's data schema, keyed by type: built here, once, from its definition. */
export const nodeDataSchemas = Object.fromEntries(nodeDefinitions.map((definition) => [definition.type, definition.dataSchema(z)])) as {
  [T in NodeType]: BuiltSchema<DefinitionOf<T>>;
};

export const triggerDataSchema = nodeDataSchemas.TRIGGER;
export const dataSourceDataSchema = nodeDataSchemas.DATA_SOURCE;
export const aiDataSchema = nodeDataSchemas.AI;
export const filterDataSchema = nodeDataSchemas.FILTER;
export const outputDataSchema = nodeDataSchemas.OUTPUT;
export const aiOutputFieldSchema = buildAiOutputFieldSchema(z);

export const positionSchema = z.strictObject({ x: z.number(), y: z.number() });

function nodeSchema<T extends string, D extends z.ZodType>(type: T, data: D) {
  return z.strictObject({ id: nodeIdSchema, type: z.literal(type), data, position: positionSchema.optional() });
}

type NodeSchemaOf<D> = D extends { type: infer T extends string } ? ReturnType<typeof nodeSchema<T, BuiltSchema<D>>> : never;
type NodeSchemas<D> = D extends readonly [infer First, ...infer Rest] ? [NodeSchemaOf<First>, ...NodeSchemas<Rest>] : [];

export const graphNodeSchema = z.discriminatedUnion(
  "type",
  nodeDefinitions.map((definition) => nodeSchema(definition.type, nodeDataSchemas[definition.type])) as unknown as NodeSchemas<NodeDefinitions>,
);

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

/**
 * A node as the editor (or an imported file) holds it before validation: its data need not match its type's
 * schema yet. The browser's graph types (lib/client/types.ts) are these.
 */
export type GraphNodeDraft = { id: string; type: NodeType; data: Record<string, unknown>; position?: Position };
export type GraphDraft = { nodes: GraphNodeDraft[]; edges: GraphEdge[] };

/** The graph's JSON Schema (draft 2020-12) for the editor and for integrators. */
export function graphJsonSchema(): object {
  return z.toJSONSchema(graphSchema);
}
