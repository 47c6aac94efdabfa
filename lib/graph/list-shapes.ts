// Save-time knowledge of what a node's output holds, for two checks that otherwise only fail at run time:
// a `forEach` / FILTER `source` that cannot be a list, and `{{item.<column>}}` naming a column the upload feeding
// the OUTPUT does not have. Only what is certain is flagged: an AI object field or a hook body may hold anything.
import type { NodeInfo } from "./validate-references";
import { TemplateSyntaxError, isLoneTemplate, templateRefs, type TemplateRef } from "./templates";

const LIST_FIELDS: Partial<Record<string, string[]>> = { DATA_SOURCE: ["rows", "columns"], FILTER: ["items"] };

/** Why `{{node.path}}` cannot be a list, or undefined when it is one (or may be). */
export function notAListProblem(node: NodeInfo, ref: TemplateRef): string | undefined {
  const [first, ...rest] = ref.path;
  const name = node.id ?? "";
  switch (node.type) {
    case "TRIGGER":
      // A hook's JSON body can be anything, so {{start.body…}} is left to the run.
      if (first === "body") return undefined;
      return `${ref.raw} is the TRIGGER's output, an empty object, not a list; name a list such as {{src.rows}} (a hook's JSON arrives as {{${name}.body}})`;
    case "DATA_SOURCE":
    case "FILTER": {
      const lists = LIST_FIELDS[node.type]!;
      if (typeof first === "string" && lists.includes(first) && rest.length === 0) return undefined;
      return `${ref.raw} is not a list: a ${node.type} offers ${lists.map((f) => `{{${name}.${f}}}`).join(" or ")}`;
    }
    case "AI": {
      if (typeof node.data?.forEach === "string" && node.data.forEach) {
        if (first === "items" && rest.length === 0) return undefined;
        return `${ref.raw} is not a list: an AI node with forEach offers {{${name}.items}}`;
      }
      const outputs = Array.isArray(node.data?.output) ? (node.data.output as { name?: unknown; type?: unknown }[]) : null;
      if (first === undefined) return `${ref.raw} is an object, not a list; name one of its array outputs`;
      if (!outputs) return undefined;
      const field = outputs.find((o) => o && o.name === first);
      if (!field) return `${ref.raw}: the AI node "${name}" declares no output "${String(first)}"`;
      // An object may hold a list below it; an array's element (rest) may be anything.
      if (field.type === "object" || field.type === "array") return undefined;
      return `${ref.raw} is a ${String(field.type)}, not a list: declare "${String(first)}" as an array output`;
    }
    case "OUTPUT":
      return `${ref.raw} is a count of emails, not a list`;
    default:
      return undefined;
  }
}

export type UploadColumns = { filename: string; columns: string[] };
export type ColumnProblem = { path: string; nodeId: string; message: string };

type RawNode = { index: number; id: string; type: unknown; data: Record<string, unknown> };

/**
 * `{{item.x}}` in an OUTPUT's to/subject/body (an AI's prompt/system) must be a column of the upload its `forEach` rows
 * come from, when that is knowable: forEach names a DATA_SOURCE's rows, or a FILTER or AI (chain) whose source does
 * (an AI node's items also have its declared outputs). Read from the raw
 * graph like the upload check, so it also runs beside a graph's other problems.
 */
export function itemColumnProblems(input: unknown, uploads: Map<string, UploadColumns>): ColumnProblem[] {
  const nodes = rawNodes(input);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const problems: ColumnProblem[] = [];
  for (const node of nodes) {
    const fields = node.type === "OUTPUT" ? ["to", "subject", "body"] : node.type === "AI" ? ["prompt", "system"] : [];
    if (fields.length === 0) continue;
    const upload = rowsUpload(node.data.forEach, byId, uploads, 0);
    if (!upload) continue;
    for (const field of fields) {
      const text = node.data[field];
      if (typeof text !== "string") continue;
      const flagged = new Set<string>();
      for (const ref of safeRefs(text)) {
        const column = ref.path[0];
        if (ref.root !== "item" || typeof column !== "string" || upload.columns.includes(column) || flagged.has(column)) continue;
        flagged.add(column);
        const available = upload.columns.length ? upload.columns.join(", ") : "none";
        problems.push({
          path: `graph.nodes[${node.index}].data.${field}`,
          nodeId: node.id,
          message: `${ref.raw}: ${upload.filename} has no column "${column}". Available columns: ${available}`,
        });
      }
    }
  }
  return problems;
}

/** The upload whose rows a lone list template yields, following FILTER sources (bounded against cycles). */
function rowsUpload(template: unknown, byId: Map<string, RawNode>, uploads: Map<string, UploadColumns>, depth: number): UploadColumns | undefined {
  if (typeof template !== "string" || depth > 50 || !safeLone(template)) return undefined;
  const [ref] = safeRefs(template);
  const node = ref && byId.get(ref.root);
  if (!node || ref.path.length !== 1) return undefined;
  if (node.type === "DATA_SOURCE" && ref.path[0] === "rows" && typeof node.data.uploadId === "string") return uploads.get(node.data.uploadId);
  if (node.type === "FILTER" && ref.path[0] === "items") return rowsUpload(node.data.source, byId, uploads, depth + 1);
  if (node.type === "AI" && ref.path[0] === "items") {
    // An AI node's items are its forEach elements with the declared fields added.
    const rows = rowsUpload(node.data.forEach, byId, uploads, depth + 1);
    const declared = Array.isArray(node.data.output) ? node.data.output.flatMap((o: unknown) => (isRecord(o) && typeof o.name === "string" ? [o.name] : [])) : [];
    return rows && { filename: rows.filename, columns: [...rows.columns, ...declared.filter((name) => !rows.columns.includes(name))] };
  }
  return undefined;
}

function rawNodes(input: unknown): RawNode[] {
  const list = isRecord(input) && Array.isArray(input.nodes) ? input.nodes : [];
  return list.flatMap((n: unknown, index) =>
    isRecord(n) && typeof n.id === "string" && isRecord(n.data) ? [{ index, id: n.id, type: n.type, data: n.data }] : [],
  );
}

function safeRefs(text: string): TemplateRef[] {
  try {
    return templateRefs(text);
  } catch (error) {
    if (error instanceof TemplateSyntaxError) return [];
    throw error;
  }
}

function safeLone(text: string): boolean {
  try {
    return isLoneTemplate(text);
  } catch (error) {
    if (error instanceof TemplateSyntaxError) return false;
    throw error;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
