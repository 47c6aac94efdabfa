// Save-time knowledge of what a node's output holds, for two checks that otherwise only fail at run time:
// a `forEach` / FILTER `source` that cannot be a list, and `{{item.<column>}}` naming a column the upload feeding
// the OUTPUT does not have. Only what is certain is flagged: an AI object field or a hook body may hold anything.
import type { NodeInfo } from "./validate-references";
import { compileExpression, ExpressionSyntaxError } from "./expressions";
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
        problems.push({
          path: `graph.nodes[${node.index}].data.${field}`,
          nodeId: node.id,
          message: `${ref.raw}: ${upload.filename} has no column "${column}".${didYouMean(column, upload.columns)} Available columns: ${available(upload)}`,
        });
      }
    }
  }
  for (const node of nodes) if (node.type === "FILTER") problems.push(...filterFieldProblems(node, byId, uploads));
  return problems;
}

/**
 * A FILTER's `expr` reads the item's fields as bare names (`age > 30`) or `item.<field>`; when the items are rows of a
 * known upload, a name that is neither one of its columns nor a node id is a typo that would fail every row at run
 * time (`Emial == ""`): flagged now, with the closest column.
 */
function filterFieldProblems(node: RawNode, byId: Map<string, RawNode>, uploads: Map<string, UploadColumns>): ColumnProblem[] {
  const expr = node.data.expr;
  if (typeof expr !== "string" || expr.trim() === "") return [];
  const upload = rowsUpload(node.data.source, byId, uploads, 0);
  if (!upload) return [];
  let references;
  try {
    references = compileExpression(expr).references();
  } catch (error) {
    if (error instanceof ExpressionSyntaxError) return []; // invalid_expression says what is wrong
    throw error;
  }
  const problems: ColumnProblem[] = [];
  const flagged = new Set<string>();
  for (const ref of references) {
    let field: string | undefined;
    if (ref.name === "item") field = ref.field;
    else if (!byId.has(ref.name)) field = ref.name;
    if (field === undefined || upload.columns.includes(field) || flagged.has(field)) continue;
    flagged.add(field);
    problems.push({
      path: `graph.nodes[${node.index}].data.expr`,
      nodeId: node.id,
      message: `The filter names "${field}" (at position ${ref.position}), which is not a column of ${upload.filename}.${didYouMean(field, upload.columns)} Available columns: ${available(upload)}`,
    });
  }
  return problems;
}

function available(upload: UploadColumns): string {
  return upload.columns.length ? upload.columns.join(", ") : "none";
}

/** ` Did you mean "Email"?` for the closest known name (same letters in another case, or a few edits away), else "". */
export function didYouMean(name: string, candidates: readonly string[]): string {
  const best = closestName(name, candidates);
  return best === undefined ? "" : ` Did you mean "${best}"?`;
}

export function closestName(name: string, candidates: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const sameLetters = candidates.find((candidate) => candidate.toLowerCase() === lower);
  if (sameLetters !== undefined) return sameLetters;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates.slice(0, 500)) {
    const distance = editDistance(lower, candidate.toLowerCase(), 3);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  const allowed = Math.max(1, Math.min(3, Math.floor(name.length / 3)));
  return bestDistance <= allowed ? best : undefined;
}

/** Damerau–Levenshtein (adjacent swaps count once), giving up past `limit`; names are short. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit || a.length > 100 || b.length > 100) return Infinity;
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, rows[i - 2][j - 2] + 1);
      rows[i][j] = value;
    }
  }
  return rows[a.length][b.length];
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
