import { sql, type SQL } from "drizzle-orm";

/** Objects nested deeper than this are shown as they are (arrays inside them are not cut). */
const PREVIEW_MAX_OBJECT_DEPTH = 32;

/** Cuts every array inside `value` to its first `max` elements (the run view); says whether anything was cut. */
export function truncateArrays(value: unknown, max: number): { value: unknown; truncated: boolean } {
  let truncated = false;
  const walk = (v: unknown, depth: number): unknown => {
    if (Array.isArray(v)) {
      if (v.length > max) truncated = true;
      return v.slice(0, max).map((x) => walk(x, depth + 1));
    }
    if (v && typeof v === "object" && depth < PREVIEW_MAX_OBJECT_DEPTH) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) setOwn(out, k, walk(x, depth + 1));
      return out;
    }
    return v;
  };
  const result = walk(value, 0);
  return { value: result, truncated };
}

/** `obj[key] = value` that keeps a `__proto__` key an own property (as JSON.parse does) instead of a prototype. */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/*
 * The same preview computed in PostgreSQL, so that a node output of 100,000 rows (tens of MB of jsonb) never
 * leaves the database: only the first `max` elements of each array do.
 *
 * The output (an object) is read once ('{}' || output returns the detoasted object as it is) and split into its
 * top-level values; each value is described by its type, its length if an array, and its preview (an array cut by
 * jsonpath `$[0 to max-1]`, anything else as it is). A value whose preview still holds a longer array deeper down
 * (`deep`) is not sent; a recursive query splits it into its children the same way, level by level, and the caller
 * puts the tree back together (`assemblePreview`). Outputs of the node types (rows of flat objects, counts) need no
 * recursion; nested arrays only come from AI outputs.
 */

/**
 * The preview of the jsonb value `v` found at `depth` (root = 0), as four expressions: t (its type), len (its length
 * if an array), p (the value, an array cut to `max`), deep (p still holds an array longer than `max` that the walk
 * reaches). `v` must be a plain column (a function scan's output): it is named several times. Scalar expressions
 * only, no lateral joins: the planner puts a Memoize on a lateral whose parameter is a large jsonb, and hashing and
 * copying tens of MB costs more than the rest of the query.
 */
export function previewExprs(v: SQL, depth: SQL, max: number): { t: SQL; len: SQL; p: SQL; deep: SQL } {
  const vars = sql`${JSON.stringify({ last: max - 1, max })}::jsonb`;
  const p = sql`case when jsonb_typeof(${v}) = 'array' and jsonb_array_length(${v}) > ${max}
                     then jsonb_path_query_array(${v}, '$[0 to $last]', ${vars}) else ${v} end`;
  return {
    t: sql`jsonb_typeof(${v})`,
    len: sql`case when jsonb_typeof(${v}) = 'array' then jsonb_array_length(${v}) end`,
    p,
    deep: sql`coalesce((jsonb_typeof(${v}) = 'array' or (jsonb_typeof(${v}) = 'object' and ${depth} < ${PREVIEW_MAX_OBJECT_DEPTH}))
                and jsonb_path_exists(${p}, 'strict $.**{1 to last} ? (@.type() == "array" && @.size() > $max)', ${vars}, true), false)`,
  };
}

/** One row of the previewed tree: `ord` locates it (1-based positions from the root), `key` is its object key. */
export type PreviewRow = { ord: number[]; key: string | null; t: string | null; len: number | null; v: unknown };

/**
 * Rebuilds the preview of an object output from its rows (in any order: sorted here into pre-order, a parent
 * before its children, siblings in order). A `deep` row (v undefined) is a container whose children follow; any other row is a value as it is.
 */
export function assemblePreview(unordered: PreviewRow[], max: number): { value: Record<string, unknown>; truncated: boolean } {
  const rows = [...unordered].sort((a, b) => compareOrd(a.ord, b.ord));
  const root: Record<string, unknown> = {};
  const containers = new Map<string, Record<string, unknown> | unknown[]>([["", root]]);
  let truncated = false;
  for (const row of rows) {
    if (row.len !== null && row.len > max) truncated = true;
    const path = row.ord.join(".");
    const parent = containers.get(row.ord.slice(0, -1).join("."));
    if (!parent) throw new Error(`output preview: row ${path} has no parent`);
    let value = row.v;
    if (value === undefined) {
      const container = row.t === "array" ? [] : {};
      containers.set(path, container);
      value = container;
    }
    if (Array.isArray(parent)) parent.push(value);
    else setOwn(parent, row.key ?? "", value);
  }
  return { value: root, truncated };
}

function compareOrd(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}
