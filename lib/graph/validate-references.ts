// Save-time checks of what templates and expressions name: syntax, known nodes, upstream nodes, `item`.
import { nodeDefinitions } from "@/lib/nodes/definitions";
import type { TemplateScope } from "@/lib/nodes/node-definition";
import type { NodeType } from "./schema";
import { TemplateSyntaxError, isLoneTemplate, templateRefs } from "./templates";
import { ExpressionSyntaxError, compileExpression } from "./expressions";
import { notAListProblem } from "./list-shapes";

export type NodeInfo = { index: number; id?: string; type?: NodeType; data?: Record<string, unknown> };
export type EdgeInfo = { index: number; source: string; target: string; condition?: string };
export type Report = (code: string, path: string, message: string, nodeId?: string) => void;

/** How each templated field of a node type is checked (its definition's form fields with a `template` scope):
 * `lone` must be exactly one template (a list); `item` fields may use {{item.…}}; `text` fields may not. */
export const TEMPLATE_FIELDS = Object.fromEntries(
  nodeDefinitions.map((definition) => [
    definition.type,
    Object.fromEntries(definition.form.flatMap((field) => (field.template ? [[field.name, field.template]] : []))),
  ]),
) as { [K in NodeType]: Record<string, TemplateScope> };

/** Fields holding an expression evaluated per item (FILTER's `expr`), from the definitions' form fields. */
const EXPRESSION_FIELDS = Object.fromEntries(
  nodeDefinitions.map((definition) => [definition.type, definition.form.filter((field) => field.kind === "expression").map((field) => field.name)]),
) as { [K in NodeType]: string[] };

export function checkNodeReferences(node: NodeInfo, byId: Map<string, NodeInfo>, ancestors: (id: string) => Set<string>, report: Report): void {
  if (!node.type || !node.data || node.id === undefined) return;
  const fields = TEMPLATE_FIELDS[node.type];
  for (const [field, kind] of Object.entries(fields)) {
    const text = node.data[field];
    if (typeof text !== "string") continue;
    const path = `graph.nodes[${node.index}].data.${field}`;
    // An AI node has an item only when it runs once per element of its forEach.
    const scope = kind === "item" && node.type === "AI" && !hasForEach(node.data) ? "text" : kind;
    checkTemplate(text, scope, path, node.id, byId, ancestors(node.id), report);
  }
  for (const field of EXPRESSION_FIELDS[node.type]) {
    const path = `graph.nodes[${node.index}].data.${field}`;
    checkExpression(node.data[field] as string, path, node.id, "filter", byId, ancestors(node.id), report);
  }
}

function hasForEach(data: Record<string, unknown>): boolean {
  return typeof data.forEach === "string" && data.forEach.length > 0;
}

function checkTemplate(
  text: string,
  kind: TemplateScope,
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
  } else if (kind === "lone" && refs.length === 1 && upstream.has(refs[0].root)) {
    const problem = notAListProblem(byId.get(refs[0].root)!, refs[0]);
    if (problem) report("not_a_list", path, problem, nodeId);
  }
  for (const ref of refs) {
    if (ref.root === "item") {
      if (kind !== "item") {
        report("invalid_template", path, `${ref.raw}: item only exists in an OUTPUT node's to, subject and body, and in the prompt and system of an AI node with forEach`, nodeId);
      }
    } else if (ref.root === "unsubscribeUrl" && ref.path.length === 0) {
      if (kind !== "item" || field !== "body") report("invalid_template", path, `${ref.raw} only exists in an OUTPUT node's body`, nodeId);
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

export function checkCondition(edge: EdgeInfo, byId: Map<string, NodeInfo>, ancestors: (id: string) => Set<string>, report: Report): void {
  if (edge.condition === undefined) return;
  const upstream = new Set([...ancestors(edge.source), edge.source]);
  checkExpression(edge.condition, `graph.edges[${edge.index}].condition`, edge.target, "condition", byId, upstream, report);
}

export function checkConditionSyntax(condition: string, path: string, report: Report): void {
  try {
    compileExpression(condition);
  } catch (error) {
    if (!(error instanceof ExpressionSyntaxError)) throw error;
    report("invalid_expression", path, error.message);
  }
}
