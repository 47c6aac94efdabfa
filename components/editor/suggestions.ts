// Template autocomplete: the `{{nodeId.field}}` references a node may use are the output fields of its
// ancestors (a reference to any other node is refused on save), plus `item.<field>` inside OUTPUT and inside an AI
// node with forEach.
import type { Graph } from "@/lib/client/types";
import { loneRef } from "@/lib/client/ai";
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
  // An OUTPUT, and an AI node with forEach, run once per item: its fields are those of the list it names (an upload's
  // columns, and the declared outputs an AI node with forEach added to its items); when the list cannot be followed
  // back to an upload, every upstream column and every such AI output.
  if (self?.type === "OUTPUT" || (self?.type === "AI" && hasForEach(self.data))) {
    const known = listItemFields(self.data.forEach, byId, columnsByUpload);
    if (known) {
      for (const field of known) out.push({ ref: `item.${field.name}`, hint: field.hint });
    } else {
      for (const column of upstreamColumns(ancestors, columnsByUpload)) out.push({ ref: `item.${column}`, hint: "column" });
      if (self.type === "OUTPUT") {
        for (const node of ancestors) {
          if (node.type !== "AI" || !hasForEach(node.data)) continue;
          for (const name of declaredOutputs(node.data)) out.push({ ref: `item.${name}`, hint: `${node.id} output` });
        }
      }
    }
  }
  return out;
}

type NodeOfGraph = Graph["nodes"][number];

function declaredOutputs(data: Record<string, unknown>): string[] {
  if (!Array.isArray(data.output)) return [];
  return (data.output as { name?: unknown }[]).flatMap((f) => (typeof f?.name === "string" && f.name ? [f.name] : []));
}

/**
 * The fields of each element of the list a forEach names, followed back through FILTERs and AI nodes with forEach to
 * an upload's columns; null when that is not knowable (a Drive file, a hook body, an AI array output).
 */
export function listItemFields(
  template: unknown,
  byId: ReadonlyMap<string, NodeOfGraph>,
  columnsByUpload: Record<string, string[]>,
  depth = 0,
): { name: string; hint: string }[] | null {
  const ref = loneRef(template);
  const node = ref && byId.get(ref.nodeId);
  if (!ref || !node || depth > 32) return null;
  if (node.type === "DATA_SOURCE" && ref.field === "rows") {
    const uploadId = typeof node.data.uploadId === "string" ? node.data.uploadId : null;
    const columns = uploadId ? columnsByUpload[uploadId] : undefined;
    return columns ? columns.map((name) => ({ name, hint: "column" })) : null;
  }
  if (node.type === "FILTER" && ref.field === "items") return listItemFields(node.data.source, byId, columnsByUpload, depth + 1);
  if (node.type === "AI" && ref.field === "items" && hasForEach(node.data)) {
    const inner = listItemFields(node.data.forEach, byId, columnsByUpload, depth + 1);
    if (!inner) return null;
    const outputs = declaredOutputs(node.data);
    // A declared name equal to an input field replaces it.
    return [...inner.filter((f) => !outputs.includes(f.name)), ...outputs.map((name) => ({ name, hint: `${node.id} output` }))];
  }
  return null;
}

export interface ListChoice {
  /** The template that names the list, e.g. `{{src.rows}}`. */
  ref: string;
  /** What the list holds, in words. */
  label: string;
}

/** The lists upstream of a node that a "For each" can name: uploads' rows, FILTER items, AI items, AI array outputs. */
export function listChoices(graph: Graph, nodeId: string): ListChoice[] {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const out: ListChoice[] = [];
  for (const id of ancestorsOf(graph, nodeId)) {
    const node = byId.get(id);
    if (!node) continue;
    if (node.type === "DATA_SOURCE") out.push({ ref: `{{${id}.rows}}`, label: `the rows of ${id}` });
    else if (node.type === "FILTER") out.push({ ref: `{{${id}.items}}`, label: `the items ${id} keeps` });
    else if (node.type === "AI" && hasForEach(node.data)) out.push({ ref: `{{${id}.items}}`, label: `the items ${id} answered` });
    else if (node.type === "AI" && Array.isArray(node.data.output)) {
      for (const field of node.data.output as { name?: unknown; type?: unknown }[]) {
        if (field?.type === "array" && typeof field.name === "string" && field.name) out.push({ ref: `{{${id}.${field.name}}}`, label: `${id}'s ${field.name}` });
      }
    }
  }
  return out.sort((a, b) => a.ref.localeCompare(b.ref));
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
