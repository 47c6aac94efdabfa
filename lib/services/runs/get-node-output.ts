import "server-only";
import { sql, type SQL } from "drizzle-orm";
import { execRows, getDb, type Db } from "@/db/client";
import { readSpilledSlice, type Spilled } from "@/db/queries/node-outputs";
import { AppError, notFound } from "@/lib/errors";
import { findAccountRun } from "./get-run";

/**
 * GET /api/workflows/runs/:runId/nodes/:nodeId/output — a page of an array in the node's output. `field` is a dot
 * path (`items`, `rows`, `summary.list`); without it, the output's only top-level array.
 */
export async function getNodeOutputPage(
  accountId: string,
  runId: string,
  nodeId: string,
  query: { field?: string; offset: number; limit: number },
): Promise<{ items: unknown[]; total: number }> {
  const run = await findAccountRun(accountId, runId);
  if (run.outputsExpiredAt) {
    throw new AppError("output_expired", "This run's node outputs were deleted after RUN_OUTPUT_RETENTION_DAYS; its summary and logs remain.");
  }
  const db = await getDb();
  // Past any real array (jsonb holds < 2^28 elements), and inside jsonpath's int32 subscripts.
  const from = Math.min(query.offset, MAX_SUBSCRIPT - 1000);
  const vars = JSON.stringify({ from, to: from + query.limit - 1 });
  const page = { from, to: from + query.limit - 1 };
  return query.field === undefined
    ? pageOfOnlyArray(db, runId, nodeId, vars, page)
    : pageOfField(db, runId, nodeId, query.field, vars, page);
}

const MAX_SUBSCRIPT = 2 ** 31 - 1;

/*
 * The node's SUCCESS output is detoasted once ('{}' || output returns the object as it is; the result is an object
 * exactly when the output is one) and walked in nested subqueries, never in lateral joins: the planner would put a
 * Memoize on a lateral whose parameter is a large jsonb, hashing and copying tens of MB.
 */
const outputOnce = (runId: string, nodeId: string) =>
  sql`(select n.output, n.spilled, case when n.status = 'SUCCESS' then '{}'::jsonb || n.output end as v, array[]::text[] as types
       from node_results n where n.run_id = ${runId} and n.node_id = ${nodeId} offset 0)`;

type Page = { from: number; to: number };

/** The page of `v` (an array): only `limit` elements are sliced out by jsonpath and sent. */
const pageOf = (v: SQL, vars: string) => sql`jsonb_path_query_array(${v}, '$[$from to $to]', ${vars}::jsonb)`;

/** Without `field`: the output's only top-level array. */
async function pageOfOnlyArray(db: Db, runId: string, nodeId: string, vars: string, page: Page) {
  const [row] = await execRows<{ root_t: string | null; raw: unknown; spilled: Spilled | null; arrays: [string, number, unknown[]][] | null }>(
    db,
    sql`select jsonb_typeof(s.v) as root_t, case when jsonb_typeof(s.v) <> 'object' then s.output end as raw, s.spilled,
               (select jsonb_agg(jsonb_build_array(e.key, jsonb_array_length(e.value), ${pageOf(sql`e.value`, vars)}) order by e.ord)
                from (select k.key, k.ord, s.v -> k.key as value
                      from jsonb_object_keys(case when jsonb_typeof(s.v) = 'object' then s.v end) with ordinality k(key, ord)
                      offset 0) e
                where jsonb_typeof(e.value) = 'array') as arrays
        from ${outputOnce(runId, nodeId)} s`,
  );
  if (!row) throw notFound("Node");
  if (row.root_t !== null && row.root_t !== "object") return pageInJs(row.raw, undefined, vars);
  const arrays = row.arrays ?? [];
  if (arrays.length === 1) {
    const [key, total, items] = arrays[0];
    // A large array (node-outputs.ts): the output holds its head, the page comes from its pieces.
    const spilled = row.spilled?.[key];
    if (spilled) return { items: await readSpilledSlice(db, runId, nodeId, key, spilled, page.from, page.to), total: spilled.length };
    return { items, total };
  }
  if (arrays.length === 0) return { items: [], total: 0 };
  throw invalidField(`This output holds several arrays (${arrays.map(([key]) => key).join(", ")}): choose one with ?field=.`);
}

/**
 * With `field` (a dot path): one subquery per part, each on the value the one below found, so nothing but the page
 * leaves the database. A part selects an object's key, or an array's element when it is a plain index (as a
 * JavaScript own property would). `types` collects the type of each value on the way (null once a part is missing).
 */
async function pageOfField(db: Db, runId: string, nodeId: string, field: string, vars: string, page: Page) {
  const parts = field.split(".");
  let walk = outputOnce(runId, nodeId);
  for (const part of parts) {
    // The index is parsed here: a cast in SQL would be folded (and fail) at plan time even in an unused CASE arm.
    const index = /^(0|[1-9][0-9]{0,8})$/.test(part) ? Number(part) : null;
    walk = sql`(select s.output, s.spilled, s.types || jsonb_typeof(s.v) as types,
                       case when jsonb_typeof(s.v) = 'object' then s.v -> ${part}::text
                            when jsonb_typeof(s.v) = 'array' then s.v -> ${index}::int end as v
                from ${walk} s offset 0)`;
  }
  const [row] = await execRows<{ raw: unknown; spilled: Spilled | null; types: (string | null)[]; total: number | null; items: unknown[] | null }>(
    db,
    sql`select case when s.types[1] <> 'object' then s.output end as raw, s.spilled, to_jsonb(s.types || jsonb_typeof(s.v)) as types,
               case when jsonb_typeof(s.v) = 'array' then jsonb_array_length(s.v) end as total,
               case when jsonb_typeof(s.v) = 'array' then ${pageOf(sql`s.v`, vars)} end as items
        from ${walk} s`,
  );
  if (!row) throw notFound("Node");
  // types: the output's, then the value each part found.
  const [rootType, ...found] = row.types;
  if (rootType !== null && rootType !== "object") return pageInJs(row.raw, field, vars);
  const spilled = rootType === "object" ? row.spilled?.[parts[0]] : undefined;
  if (spilled) return pageOfSpilledField(db, runId, nodeId, field, spilled, page);
  if (row.total !== null) return { items: row.items ?? [], total: row.total };
  // Not found, or not an array: the same answers as a walk over the parsed output.
  const missing = rootType === null ? 0 : found.findIndex((t) => t === null);
  if (missing === -1) throw invalidField(`The output field "${field}" is not an array.`);
  // An array's own "length" is a number: the last part names it, or the walk stops on it.
  const parentType = missing === 0 ? rootType : found[missing - 1];
  if (parentType === "array" && parts[missing] === "length" && missing === parts.length - 1) {
    throw invalidField(`The output field "${field}" is not an array.`);
  }
  throw invalidField(`The output has no field "${field}".`);
}

/**
 * `field` starts with a large array stored in pieces (node-outputs.ts): the array itself is paged from its pieces;
 * a path into one of its elements (`rows.4711.tags`) reads that element and walks the rest as pickArray does.
 */
async function pageOfSpilledField(db: Db, runId: string, nodeId: string, field: string, spilled: Spilled[string], page: Page) {
  const [head, index, ...rest] = field.split(".");
  if (index === undefined) return { items: await readSpilledSlice(db, runId, nodeId, head, spilled, page.from, page.to), total: spilled.length };
  const position = /^(0|[1-9][0-9]{0,8})$/.test(index) ? Number(index) : null;
  if (position === null || position >= spilled.length) {
    // An array's own "length" is a number: the same answers as the walk over the whole output.
    if (index === "length" && rest.length === 0) throw invalidField(`The output field "${field}" is not an array.`);
    throw invalidField(`The output has no field "${field}".`);
  }
  const [element] = await readSpilledSlice(db, runId, nodeId, head, spilled, position, position);
  const array = rest.length === 0 ? element : walkParts(element, rest, field);
  if (!Array.isArray(array)) throw invalidField(`The output field "${field}" is not an array.`);
  return { items: array.slice(page.from, page.to + 1), total: array.length };
}

/** An output that is not an object (never written by the node types): the page from the parsed value. */
function pageInJs(raw: unknown, field: string | undefined, vars: string) {
  const { from, to } = JSON.parse(vars) as { from: number; to: number };
  const output = raw && typeof raw === "object" ? (raw as Record<string, unknown>) : {};
  const array = pickArray(output, field);
  return { items: array.slice(from, to + 1), total: array.length };
}

function pickArray(output: Record<string, unknown>, field: string | undefined): unknown[] {
  if (field === undefined) {
    const arrays = Object.entries(output).filter(([, v]) => Array.isArray(v));
    if (arrays.length === 1) return arrays[0][1] as unknown[];
    if (arrays.length === 0) return [];
    throw invalidField(`This output holds several arrays (${arrays.map(([k]) => k).join(", ")}): choose one with ?field=.`);
  }
  const value = walkParts(output, field.split("."), field);
  if (!Array.isArray(value)) throw invalidField(`The output field "${field}" is not an array.`);
  return value;
}

/** The value at `parts` below `value`, own properties only (an array's index or "length" included). */
function walkParts(value: unknown, parts: string[], field: string): unknown {
  for (const part of parts) {
    if (value === null || typeof value !== "object" || !Object.prototype.hasOwnProperty.call(value, part)) {
      throw invalidField(`The output has no field "${field}".`);
    }
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function invalidField(detail: string) {
  return new AppError("validation_failed", detail, { errors: [{ path: "query.field", code: "invalid_field", message: detail }] });
}
