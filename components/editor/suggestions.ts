// Template autocomplete: the `{{nodeId.field}}` references a node may use are the output fields of its
// ancestors (a reference to any other node is refused on save), plus `item.<field>` inside OUTPUT and inside an AI
// node with forEach.
import type { Graph } from "@/lib/client/types";
import { nodeDefinition } from "@/lib/nodes/definitions";

export function ancestorsOf(graph: Graph, nodeId: string): string[] {
  const parents = new Map<string, string[]>();
  for (const e of graph.edges) parents.set(e.target, [...(parents.get(e.target) ?? []), e.source]);
  const seen = new Set<string>();
  const stack = [...(parents.get(nodeId) ?? [])];
  while (stack.length) {
    const id = stack.pop()!;
    if (seen.has(id) || id === nodeId) continue;
    seen.add(id);
    stack.push(...(parents.get(id) ?? []));
  }
  return [...seen];
}

export interface Suggestion {
  ref: string;
  hint: string;
}

export function templateSuggestions(graph: Graph, nodeId: string, columnsByUpload: Record<string, string[]>): Suggestion[] {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const self = byId.get(nodeId);
  const ancestors = ancestorsOf(graph, nodeId)
    .map((id) => byId.get(id))
    .filter((n): n is NonNullable<typeof n> => !!n);
  const out: Suggestion[] = [];
  for (const node of ancestors) {
    for (const field of nodeDefinition(node.type).outputFields(node.data)) out.push({ ref: `${node.id}.${field}`, hint: node.type });
  }
  // An OUTPUT, and an AI node with forEach, run once per item: its fields are the upstream columns, plus the declared
  // outputs an upstream AI node with forEach added to its items.
  if (self?.type === "OUTPUT" || (self?.type === "AI" && hasForEach(self.data))) {
    for (const column of upstreamColumns(ancestors, columnsByUpload)) out.push({ ref: `item.${column}`, hint: "column" });
    if (self.type === "OUTPUT") {
      for (const node of ancestors) {
        if (node.type !== "AI" || !hasForEach(node.data) || !Array.isArray(node.data.output)) continue;
        for (const field of node.data.output as { name?: unknown }[]) {
          if (typeof field?.name === "string" && field.name) out.push({ ref: `item.${field.name}`, hint: `${node.id} output` });
        }
      }
    }
  }
  return out;
}

function hasForEach(data: Record<string, unknown>): boolean {
  return typeof data.forEach === "string" && data.forEach.length > 0;
}

/** Column names of the uploads that the given DATA_SOURCE nodes read (for `item.<column>` and FILTER hints). */
export function upstreamColumns(nodes: Graph["nodes"], columnsByUpload: Record<string, string[]>): string[] {
  const columns = new Set<string>();
  for (const n of nodes) {
    const uploadId = n.type === "DATA_SOURCE" && typeof n.data.uploadId === "string" ? n.data.uploadId : null;
    for (const c of (uploadId && columnsByUpload[uploadId]) || []) columns.add(c);
  }
  return [...columns];
}

/** The partial reference being typed just before the caret, when the caret is inside an open `{{`. */
export function openTemplateAt(text: string, caret: number): { start: number; partial: string } | null {
  const before = text.slice(0, caret);
  const match = /\{\{\s*([A-Za-z0-9_.]*)$/.exec(before);
  if (!match) return null;
  return { start: caret - match[1].length, partial: match[1] };
}
