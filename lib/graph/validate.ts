// Save-time validation of a workflow graph (CONTRACT.md section 4). Pure; reports every problem at once, each
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
  type NodeType,
} from "./schema";
import { TemplateSyntaxError, isLoneTemplate, templateRefs } from "./templates";
import { ExpressionSyntaxError, compileExpression } from "./expressions";

export type GraphError = { path: string; code: string; message: string; nodeId?: string };

export type GraphValidation = { valid: boolean; errors: GraphError[]; graph: Graph | null };

/** How each templated field of a node type is checked: `lone` must be exactly one template (a list); `item`
 * fields may use {{item.…}}; `text` fields may not. */
export const TEMPLATE_FIELDS: { [K in NodeType]: Record<string, "lone" | "item" | "text"> } = {
  TRIGGER: {},
  DATA_SOURCE: {},
  AI: { prompt: "text", system: "text" },
  FILTER: { source: "lone" },
  OUTPUT: { forEach: "lone", to: "item", subject: "item", body: "item" },
};

type NodeInfo = { index: number; id?: string; type?: NodeType; data?: Record<string, unknown> };
type EdgeInfo = { index: number; source: string; target: string; condition?: string };

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

type Report = (code: string, path: string, message: string, nodeId?: string) => void;

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
      report("invalid_expression", `${path}.condition`, "An edge condition must be text", raw.target as string);
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

function checkConditionSyntax(condition: string, path: string, report: Report): void {
  try {
    compileExpression(condition);
  } catch (error) {
    if (!(error instanceof ExpressionSyntaxError)) throw error;
    report("invalid_expression", path, error.message);
  }
}

/** One `cycle` error per strongly connected component (Tarjan's algorithm, iterative). */
function checkCycles(nodes: NodeInfo[], edges: EdgeInfo[], report: Report): void {
  const successors = new Map<string, string[]>();
  for (const edge of edges) successors.set(edge.source, [...(successors.get(edge.source) ?? []), edge.target]);
  const order = [...new Set(nodes.flatMap((node) => (node.id === undefined ? [] : [node.id])))];
  for (const component of stronglyConnected(order, successors)) {
    if (component.length < 2) continue;
    const members = new Set(component);
    const sorted = order.filter((id) => members.has(id));
    const edge = edges.find((candidate) => members.has(candidate.source) && members.has(candidate.target))!;
    report("cycle", `graph.edges[${edge.index}]`, `Nodes ${sorted.map((id) => `"${id}"`).join(", ")} form a cycle; a node cannot depend on itself`, sorted[0]);
  }
}

function stronglyConnected(order: string[], successors: Map<string, string[]>): string[][] {
  const indexOf = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  for (const start of order) {
    if (indexOf.has(start)) continue;
    const work: { id: string; next: number }[] = [{ id: start, next: 0 }];
    indexOf.set(start, counter);
    lowLink.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const targets = successors.get(frame.id) ?? [];
      if (frame.next < targets.length) {
        const target = targets[frame.next++];
        if (!indexOf.has(target)) {
          indexOf.set(target, counter);
          lowLink.set(target, counter++);
          stack.push(target);
          onStack.add(target);
          work.push({ id: target, next: 0 });
        } else if (onStack.has(target)) {
          lowLink.set(frame.id, Math.min(lowLink.get(frame.id)!, indexOf.get(target)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].id;
        lowLink.set(parent, Math.min(lowLink.get(parent)!, lowLink.get(frame.id)!));
      }
      if (lowLink.get(frame.id) === indexOf.get(frame.id)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.id);
        components.push(component);
      }
    }
  }
  return components;
}

function checkReachable(nodes: NodeInfo[], edges: EdgeInfo[], report: Report): void {
  const triggers = nodes.filter((node) => node.type === "TRIGGER" && node.id !== undefined).map((node) => node.id!);
  if (triggers.length === 0) return; // trigger_count already says what is wrong
  const successors = new Map<string, string[]>();
  for (const edge of edges) successors.set(edge.source, [...(successors.get(edge.source) ?? []), edge.target]);
  const reached = new Set(triggers);
  const queue = [...triggers];
  while (queue.length > 0) {
    for (const next of successors.get(queue.shift()!) ?? []) {
      if (!reached.has(next)) {
        reached.add(next);
        queue.push(next);
      }
    }
  }
  for (const node of nodes) {
    if (node.id !== undefined && !reached.has(node.id)) {
      report("unreachable_node", `graph.nodes[${node.index}]`, `Node "${node.id}" cannot be reached from the TRIGGER; connect it with an edge`, node.id);
    }
  }
}

/** Lazily computed ancestor sets over the well-formed edges. */
function ancestorIndex(edges: EdgeInfo[]): (nodeId: string) => Set<string> {
  const sourcesOf = new Map<string, string[]>();
  for (const edge of edges) sourcesOf.set(edge.target, [...(sourcesOf.get(edge.target) ?? []), edge.source]);
  const cache = new Map<string, Set<string>>();
  return (nodeId) => {
    let result = cache.get(nodeId);
    if (result) return result;
    result = new Set<string>();
    const stack = [...(sourcesOf.get(nodeId) ?? [])];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (result.has(id)) continue;
      result.add(id);
      stack.push(...(sourcesOf.get(id) ?? []));
    }
    result.delete(nodeId); // on a cycle a node reaches itself; `cycle` reports that
    cache.set(nodeId, result);
    return result;
  };
}

function checkNodeReferences(node: NodeInfo, byId: Map<string, NodeInfo>, ancestors: (id: string) => Set<string>, report: Report): void {
  if (!node.type || !node.data || node.id === undefined) return;
  const fields = TEMPLATE_FIELDS[node.type];
  for (const [field, kind] of Object.entries(fields)) {
    const text = node.data[field];
    if (typeof text !== "string") continue;
    const path = `graph.nodes[${node.index}].data.${field}`;
    checkTemplate(text, kind, path, node.id, byId, ancestors(node.id), report);
  }
  if (node.type === "FILTER") {
    const path = `graph.nodes[${node.index}].data.expr`;
    checkExpression(node.data.expr as string, path, node.id, "filter", byId, ancestors(node.id), report);
  }
}

function checkTemplate(
  text: string,
  kind: "lone" | "item" | "text",
  path: string,
  nodeId: string,
  byId: Map<string, NodeInfo>,
  upstream: Set<string>,
  report: Report,
): void {
  let refs;
  try {
    refs = templateRefs(text);
  } catch (error) {
    if (!(error instanceof TemplateSyntaxError)) throw error;
    return report("invalid_template", path, error.message, nodeId);
  }
  const field = path.slice(path.lastIndexOf(".") + 1);
  if (kind === "lone" && !isLoneTemplate(text)) {
    report("invalid_template", path, `${field} must be exactly one template naming a list, such as {{src.rows}}`, nodeId);
  }
  for (const ref of refs) {
    if (ref.root === "item") {
      if (kind !== "item") report("invalid_template", path, `${ref.raw}: item only exists in an OUTPUT node's to, subject and body`, nodeId);
    } else if (!byId.has(ref.root)) {
      report("unknown_template_ref", path, `${ref.raw} names node "${ref.root}", which does not exist`, nodeId);
    } else if (!upstream.has(ref.root)) {
      report("template_ref_not_upstream", path, `${ref.raw} names node "${ref.root}", which does not run before "${nodeId}"; connect it upstream`, nodeId);
    }
  }
}

function checkExpression(
  source: string,
  path: string,
  nodeId: string,
  scope: "filter" | "condition",
  byId: Map<string, NodeInfo>,
  upstream: Set<string>,
  report: Report,
): void {
  let compiled;
  try {
    compiled = compileExpression(source);
  } catch (error) {
    if (!(error instanceof ExpressionSyntaxError)) throw error;
    return report("invalid_expression", path, error.message, nodeId);
  }
  const flagged = new Set<string>();
  for (const ref of compiled.references()) {
    if (flagged.has(ref.name)) continue;
    const problem = scope === "filter" ? filterNameProblem(ref, byId, upstream) : conditionNameProblem(ref.name, byId, upstream);
    if (problem) {
      flagged.add(ref.name);
      report("invalid_expression", path, `${problem} (at position ${ref.position})`, nodeId);
    }
  }
}

/** In a FILTER, bare names are item fields (unknown until the run); `<nodeId>.` must name an upstream node. */
function filterNameProblem(ref: { name: string; member: boolean }, byId: Map<string, NodeInfo>, upstream: Set<string>): string | undefined {
  if (ref.member && byId.has(ref.name) && !upstream.has(ref.name)) {
    return `"${ref.name}" is a node that does not run before this FILTER; connect it upstream, or write item.${ref.name} for the item's field`;
  }
  return undefined;
}

function conditionNameProblem(name: string, byId: Map<string, NodeInfo>, upstream: Set<string>): string | undefined {
  if (name === "item") return "An edge condition has no item; it can use upstream nodes such as src.rowCount";
  if (!byId.has(name)) return `Unknown name "${name}": an edge condition can only use upstream nodes such as src.rowCount`;
  if (!upstream.has(name)) return `"${name}" does not run before this edge's source; a condition can only use upstream nodes`;
  return undefined;
}

function checkCondition(edge: EdgeInfo, byId: Map<string, NodeInfo>, ancestors: (id: string) => Set<string>, report: Report): void {
  if (edge.condition === undefined) return;
  const upstream = new Set([...ancestors(edge.source), edge.source]);
  checkExpression(edge.condition, `graph.edges[${edge.index}].condition`, edge.target, "condition", byId, upstream, report);
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
