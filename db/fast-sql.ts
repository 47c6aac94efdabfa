import { entityKind, SQL } from "drizzle-orm";

/**
 * A faster `sqlToQuery` for drizzle's PostgreSQL dialect. drizzle turns an `sql` template into its text and
 * parameters by testing every chunk against a dozen entity kinds in turn (`is()`, each a walk up the prototype chain)
 * before a plain parameter falls through to the last case, and merges arrays of partial results at every level: for
 * the engine's CTE statements (a tiny run's claim, ledger and finalize statements, 20–30 parameters and a few
 * hundred chunks each) that was ~0.5 ms of the ~3.5 ms of CPU a tiny run cost the executor (bench/tiny-exec with a
 * CPU profile, 2026-11-27: 0.61–0.67 ms per run in drizzle-orm). Here the common chunks — text, nested `sql`, an
 * identifier, a string, number, boolean, bigint or null parameter, a value bound to a column (`eq(column, value)`:
 * its column's mapToDriverValue, as drizzle calls it), nothing — are written in one pass into one
 * string and one array; any other chunk (a table, a column, a typed `Param`, an array, an object…) is handed to
 * drizzle's own builder for that chunk, numbered after the parameters before it, so the text and the parameters are
 * exactly what drizzle writes (test/db/fast-sql.test.ts compares them). A subtree that inlines its parameters
 * (`.inlineParams()`) is drizzle's too. `typings` (drizzle's per-parameter type hints) are left out: neither the
 * postgres.js nor the PGlite session reads them.
 */

type Query = { sql: string; params: unknown[] };
type BuildConfig = Record<string, unknown> & { escapeName: (name: string) => string };
type Dialect = { sqlToQuery: (sql: SQL, invokeSource?: string) => Query; escapeName: (name: string) => string };
type Builder = { buildQueryFromSourceParams(chunks: unknown[], config: BuildConfig): Query };

/** drizzle keeps the flag private; `.inlineParams()` sets it. */
const inlines = (value: SQL): boolean => (value as unknown as { shouldInlineParams: boolean }).shouldInlineParams;
const kindOf = (value: object): unknown => (value.constructor as { [entityKind]?: unknown } | undefined)?.[entityKind];

function write(chunks: unknown[], out: Query, config: BuildConfig, builder: Builder): void {
  for (const chunk of chunks) {
    if (chunk === undefined) continue;
    if (chunk === null) {
      out.params.push(null);
      out.sql += `$${out.params.length}`;
      continue;
    }
    switch (typeof chunk) {
      case "string":
      case "number":
      case "boolean":
      case "bigint":
        out.params.push(chunk);
        out.sql += `$${out.params.length}`;
        continue;
      case "object": {
        const kind = kindOf(chunk);
        if (kind === "StringChunk") {
          const value = (chunk as { value: string[] }).value;
          out.sql += value.length === 1 ? value[0] : value.join("");
          continue;
        }
        if (kind === "SQL" && !inlines(chunk as SQL)) {
          write((chunk as SQL).queryChunks, out, config, builder);
          continue;
        }
        if (kind === "Name") {
          out.sql += config.escapeName((chunk as { value: string }).value);
          continue;
        }
        if (kind === "Param") {
          // A value bound to a column (eq(column, value)…): the column maps it to the driver's value, as drizzle does.
          const { value, encoder } = chunk as { value: unknown; encoder: { mapToDriverValue(v: unknown): unknown } };
          if (value !== null && typeof value === "object" && kindOf(value) === "Placeholder") break;
          const mapped = value === null ? null : encoder.mapToDriverValue(value);
          if (mapped !== null && typeof mapped === "object" && kindOf(mapped) === "SQL") {
            write([mapped], out, config, builder);
            continue;
          }
          out.params.push(mapped);
          out.sql += `$${out.params.length}`;
          continue;
        }
        break;
      }
    }
    // Anything else: drizzle's own code for this chunk, its parameters numbered after ours.
    const part = builder.buildQueryFromSourceParams([chunk], { ...config, paramStartIndex: { value: out.params.length } });
    out.sql += part.sql;
    for (const param of part.params) out.params.push(param);
  }
}

/** `sql` as drizzle's dialect would build it, or undefined to let drizzle build it (the root inlines its parameters). */
export function fastSqlToQuery(root: SQL, config: BuildConfig): Query | undefined {
  if (kindOf(root) !== "SQL" || inlines(root)) return undefined;
  const out: Query = { sql: "", params: [] };
  write(root.queryChunks, out, config, root as unknown as Builder);
  return out;
}

/**
 * Installs fastSqlToQuery on a drizzle database's dialect (each `drizzle()` makes its own; its transactions share it).
 * The config is the one the dialect itself passes to `toQuery`.
 */
export function withFastSql<T extends object>(db: T): T {
  const dialect = (db as unknown as { dialect?: Dialect & Record<string, unknown> }).dialect;
  if (!dialect || typeof dialect.sqlToQuery !== "function") return db;
  const original = dialect.sqlToQuery.bind(dialect);
  // The dialect's parts do not change: one config for every statement, another only for an `invokeSource`.
  const config = {
    casing: dialect.casing,
    escapeName: dialect.escapeName,
    escapeParam: dialect.escapeParam,
    escapeString: dialect.escapeString,
    prepareTyping: dialect.prepareTyping,
  } as BuildConfig;
  dialect.sqlToQuery = (sql: SQL, invokeSource?: string) =>
    fastSqlToQuery(sql, invokeSource === undefined ? config : { ...config, invokeSource }) ?? original(sql, invokeSource);
  return db;
}
