// Save-time validation of a workflow graph. Pure; reports every problem at once, each
// with one of the contract's codes and a path starting at "graph.".
//
// Codes the contract does not list, for shapes its list does not cover: `invalid_graph` when the graph itself
// or an edge is not the right kind of value (not an object, an unknown key, nodes not a list). Problems inside a
// node use `invalid_node_data` (unknown type, unknown key, bad position, bad data), its id `invalid_node_id`.
// A bad expression — syntax, an unknown name in an edge condition, a node that is not upstream — is always
// `invalid_expression`; the template codes are for templates.
import {
  MAX_EDGES,
  MAX_NODES,
  NODE_ID_PATTERN,
  NODE_TYPES,
  RESERVED_NODE_IDS,
  graphSchema,
  nodeDataSchemas,
  positionSchema,
  type Graph,
} from "./schema";
import { TEMPLATE_FIELDS, checkCondition, checkConditionSyntax, checkNodeReferences, type EdgeInfo, type NodeInfo, type Report } from "./validate-references";
import { ancestorIndex, checkCycles, checkReachable } from "./validate-structure";

export type GraphError = { path: string; code: string; message: string; nodeId?: string };

export type GraphValidation = { valid: boolean; errors: GraphError[]; graph: Graph | null };

export { TEMPLATE_FIELDS };

const NODE_KEYS = new Set(["id", "type", "data", "position"]);
const EDGE_KEYS = new Set(["source", "target", "condition"]);

export function validateGraph(input: unknown): GraphValidation {
  const errors: GraphError[] = [];
  const report = (code: string, path: string, message: string, nodeId?: string) =>
    errors.push(nodeId === undefined ? { path, code, message } : { path, code, message, nodeId });

  if (!isRecord(input)) {
    report("invalid_graph", "graph", "The graph must be an object with nodes and edges");
    return { valid: false, errors, graph: null };
  }
  const rawNodes = listAt(input, "nodes", report);
  const rawEdges = listAt(input, "edges", report);
  for (const key of Object.keys(input)) {
    if (key !== "nodes" && key !== "edges") report("invalid_graph", joinPath("graph", key), `Unknown key "${key}" in the graph`);
  }
  // Size first, before any per-node work, so a huge graph is answered at once.
  if (rawNodes.length > MAX_NODES) report("too_large", "graph.nodes", `A graph has at most ${MAX_NODES} nodes; this one has ${rawNodes.length}`);
  if (rawEdges.length > MAX_EDGES) report("too_large", "graph.edges", `A graph has at most ${MAX_EDGES} edges; this one has ${rawEdges.length}`);
  if (errors.some((error) => error.code === "too_large")) return { valid: false, errors, graph: null };

  const nodes = rawNodes.map((raw, index) => checkNode(raw, index, report));
  const byId = new Map<string, NodeInfo>();
  for (const node of nodes) {
    if (node.id === undefined) continue;
    if (byId.has(node.id)) report("duplicate_node_id", `graph.nodes[${node.index}].id`, `Node id "${node.id}" is used by more than one node`, node.id);
    else byId.set(node.id, node);
  }
  checkNodeCounts(nodes, report);
  const edges = checkEdges(rawEdges, byId, report);
  checkCycles(nodes, edges, report);
  checkReachable(nodes, edges, report);
  const ancestors = ancestorIndex(edges);
  // A node whose id another node already holds has no well-defined place in the graph: its references are not checked.
  for (const node of nodes) if (node.id !== undefined && byId.get(node.id) === node) checkNodeReferences(node, byId, ancestors, report);
  for (const edge of edges) checkCondition(edge, byId, ancestors, report);

  const parsed = graphSchema.safeParse(input);
  return { valid: errors.length === 0, errors, graph: parsed.success ? parsed.data : null };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function listAt(input: Record<string, unknown>, key: "nodes" | "edges", report: Report): unknown[] {
  const value = Object.hasOwn(input, key) ? input[key] : undefined;
  if (Array.isArray(value)) return value;
  report("invalid_graph", `graph.${key}`, `The graph's ${key} must be a list`);
  return [];
}

/** `graph.nodes[0].data` + "name" → `graph.nodes[0].data.name`; keys that are not identifiers use ["…"]. */
function joinPath(base: string, key: string | number | symbol): string {
  if (typeof key === "number") return `${base}[${key}]`;
  const text = String(key);
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(text) ? `${base}.${text}` : `${base}[${JSON.stringify(text)}]`;
}

function checkNode(raw: unknown, index: number, report: Report): NodeInfo {
  const path = `graph.nodes[${index}]`;
  if (!isRecord(raw)) {
    report("invalid_node_data", path, "A node must be an object { id, type, data, position? }");
    return { index };
  }
  const id = typeof raw.id === "string" ? raw.id : undefined;
  checkNodeId(raw, path, report);
  for (const key of Object.keys(raw)) {
    if (!NODE_KEYS.has(key)) report("invalid_node_data", joinPath(path, key), `Unknown key "${key}" in a node`, id);
  }
  if (raw.position !== undefined && !positionSchema.safeParse(raw.position).success) {
    report("invalid_node_data", `${path}.position`, "position must be { x: number, y: number }", id);
  }
  const type = NODE_TYPES.find((candidate) => candidate === raw.type);
  if (!type) {
    const got = typeof raw.type === "string" ? `"${raw.type}"` : "missing";
    report("invalid_node_data", `${path}.type`, `Node type is ${got}; use one of ${NODE_TYPES.join(", ")}`, id);
    return { index, id };
  }
  const parsed = nodeDataSchemas[type].safeParse(raw.data);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const issuePath = issue.path.reduce<string>((acc, key) => joinPath(acc, key as string | number), `${path}.data`);
      if (issue.code === "unrecognized_keys") {
        for (const key of issue.keys) report("invalid_node_data", joinPath(issuePath, key), `Unknown key "${key}" in ${type} data`, id);
      } else {
        report("invalid_node_data", issuePath, issue.message, id);
      }
    }
    return { index, id, type };
  }
  return { index, id, type, data: parsed.data as Record<string, unknown> };
}

function checkNodeId(raw: Record<string, unknown>, path: string, report: Report): void {
  const id = raw.id;
  if (typeof id !== "string") {
    report("invalid_node_id", `${path}.id`, "Every node needs an id (text)");
  } else if (!NODE_ID_PATTERN.test(id)) {
    report("invalid_node_id", `${path}.id`, `Node id "${id}" must start with a letter or _ and use only letters, digits and _ (at most 32)`, id);
  } else if (RESERVED_NODE_IDS.includes(id)) {
    report("invalid_node_id", `${path}.id`, `Node id "${id}" is reserved; choose another`, id);
  }
}

function checkNodeCounts(nodes: NodeInfo[], report: Report): void {
  const triggers = nodes.filter((node) => node.type === "TRIGGER");
  if (triggers.length === 0) report("trigger_count", "graph.nodes", "A workflow needs exactly one TRIGGER node; it has none");
  for (const extra of triggers.slice(1)) {
    report("trigger_count", `graph.nodes[${extra.index}]`, `A workflow needs exactly one TRIGGER node; it has ${triggers.length}`, extra.id);
  }
  if (!nodes.some((node) => node.type === "OUTPUT")) report("no_output", "graph.nodes", "A workflow needs at least one OUTPUT node");
}

function checkEdges(rawEdges: unknown[], byId: Map<string, NodeInfo>, report: Report): EdgeInfo[] {
  const edges: EdgeInfo[] = [];
  const seen = new Set<string>();
  rawEdges.forEach((raw, index) => {
    const path = `graph.edges[${index}]`;
    if (!isRecord(raw)) return report("invalid_graph", path, "An edge must be an object { source, target, condition? }");
    for (const key of Object.keys(raw)) {
      if (!EDGE_KEYS.has(key)) report("invalid_graph", joinPath(path, key), `Unknown key "${key}" in an edge`);
    }
    let known = true;
    for (const end of ["source", "target"] as const) {
      const id = raw[end];
      if (typeof id === "string" && byId.has(id)) continue;
      known = false;
      const what = typeof id === "string" ? `names node "${id}", which does not exist` : "is missing";
      report("unknown_edge_endpoint", `${path}.${end}`, `The edge's ${end} ${what}`);
    }
    const condition = raw.condition;
    if (condition !== undefined && typeof condition !== "string") {
      report("invalid_expression", `${path}.condition`, "An edge condition must be text", typeof raw.target === "string" ? raw.target : undefined);
    }
    if (!known) {
      if (typeof condition === "string") checkConditionSyntax(condition, `${path}.condition`, report);
      return;
    }
    const source = raw.source as string;
    const target = raw.target as string;
    if (source === target) return report("self_loop", path, `Node "${source}" has an edge to itself`, source);
    const key = `${source}\u0000${target}`;
    if (seen.has(key)) return report("duplicate_edge", path, `There is more than one edge from "${source}" to "${target}"`, target);
    seen.add(key);
    if (byId.get(target)!.type === "TRIGGER") {
      report("trigger_has_inputs", `${path}.target`, `The TRIGGER node "${target}" cannot have incoming edges`, target);
    }
    edges.push({ index, source, target, condition: typeof condition === "string" ? condition : undefined });
  });
  return edges;
}

// ───────────────────────────── references to outside objects ─────────────────────────────

export function referencedUploads(graph: Graph): { nodeId: string; uploadId: string; path: string }[] {
  return graph.nodes.flatMap((node, index) =>
    node.type === "DATA_SOURCE" && "uploadId" in node.data
      ? [{ nodeId: node.id, uploadId: node.data.uploadId, path: `graph.nodes[${index}].data.uploadId` }]
      : [],
  );
}

export function referencedDriveFiles(graph: Graph): { nodeId: string; driveFileId: string; path: string }[] {
  return graph.nodes.flatMap((node, index) =>
    node.type === "DATA_SOURCE" && "driveFileId" in node.data
      ? [{ nodeId: node.id, driveFileId: node.data.driveFileId, path: `graph.nodes[${index}].data.driveFileId` }]
      : [],
  );
}
