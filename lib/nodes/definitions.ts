// Every node type's client-safe definition, in palette order. Adding a node type: its folder
// (definition.ts + execute.ts), one entry here and one in the executor registry (registry.ts).
// lib/graph/schema.ts builds the data schemas and the graph's node union from this list. No zod here at run time.
import { aiDefinition } from "./ai/definition";
import { dataSourceDefinition } from "./data-source/definition";
import { filterDefinition } from "./filter/definition";
import type { NodeDefinition } from "./node-definition";
import { outputDefinition } from "./output/definition";
import { triggerDefinition } from "./trigger/definition";

export const nodeDefinitions = [triggerDefinition, dataSourceDefinition, aiDefinition, filterDefinition, outputDefinition] as const;

export type NodeDefinitions = typeof nodeDefinitions;
export type DefinedNodeType = NodeDefinitions[number]["type"];

// Mapped over the definitions' tuple, so NODE_TYPES keeps one literal type per position.
type TypesOf<D extends readonly unknown[]> = { -readonly [K in keyof D]: D[K] extends { type: infer T } ? T : never };

/** Every node type, in the palette's order (lib/graph/schema.ts re-exports it with the graph's other names). */
export const NODE_TYPES = nodeDefinitions.map((definition) => definition.type) as TypesOf<NodeDefinitions>;

const byType = new Map<string, NodeDefinition>(nodeDefinitions.map((definition) => [definition.type, definition]));

/** The definition of a node type (every NodeType has one: the list above is where NodeType comes from). */
export function nodeDefinition(type: DefinedNodeType): NodeDefinition {
  return byType.get(type)!;
}
