// Every node type's client-safe definition, in palette order. Adding a node type: its folder
// (definition.ts + execute.ts), one entry here and one in the executor registry (registry.ts).
// lib/graph/schema.ts builds NODE_TYPES, the data schemas and the graph's node union from this list.
import { aiDefinition } from "./ai/definition";
import { dataSourceDefinition } from "./data-source/definition";
import { filterDefinition } from "./filter/definition";
import type { NodeDefinition } from "./node-definition";
import { outputDefinition } from "./output/definition";
import { triggerDefinition } from "./trigger/definition";

export const nodeDefinitions = [triggerDefinition, dataSourceDefinition, aiDefinition, filterDefinition, outputDefinition] as const;

export type NodeDefinitions = typeof nodeDefinitions;
export type DefinedNodeType = NodeDefinitions[number]["type"];

const byType = new Map<string, NodeDefinition>(nodeDefinitions.map((definition) => [definition.type, definition]));

/** The definition of a node type (every NodeType has one: the list above is where NodeType comes from). */
export function nodeDefinition(type: DefinedNodeType): NodeDefinition {
  return byType.get(type)!;
}
