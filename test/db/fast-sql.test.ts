import { and, eq, inArray, sql, type SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { describe, expect, it } from "vitest";
import { fastSqlToQuery, withFastSql } from "@/db/fast-sql";
import { emailSends, uploads } from "@/db/schema";
import { execRows, getDb } from "@/db/client";

/**
 * db/fast-sql.ts must build exactly what drizzle's dialect builds: the same text and the same parameters in the same
 * order, for every kind of chunk the project's statements use — and hand back to drizzle what it does not handle.
 */
const dialect = new PgDialect();
const config = () =>
  ({
    casing: (dialect as unknown as { casing: unknown }).casing,
    escapeName: dialect.escapeName,
    escapeParam: dialect.escapeParam,
    escapeString: dialect.escapeString,
    prepareTyping: (dialect as unknown as { prepareTyping: unknown }).prepareTyping,
  }) as Parameters<typeof fastSqlToQuery>[1];

function same(query: SQL) {
  const expected = dialect.sqlToQuery(query);
  const fast = fastSqlToQuery(query, config());
  expect(fast).toBeDefined();
  expect(fast!.sql).toBe(expected.sql);
  expect(fast!.params).toEqual(expected.params);
  return fast!;
}

describe("fastSqlToQuery", () => {
  it("writes text, nested templates and plain parameters as drizzle does, numbered in order", () => {
    const key = { runId: "run_1", nodeId: "out", accountId: "acc_1" };
    const inner = sql`select 1 from suppressions s where s.account_id = ${key.accountId} and s.email = x."to"`;
    const built = same(sql`with a as (${inner}), b as (select ${42}::int as n, ${true} as t, ${null}::text as z, ${10n}::bigint as big)
      update email_sends set status = 'sent' where run_id = ${key.runId} and node_id = ${key.nodeId}${undefined} ${sql``}${sql.raw(" -- raw")}`);
    expect(built.params).toEqual(["acc_1", 42, true, null, 10n, "run_1", "out"]);
    expect(built.sql).toContain("s.account_id = $1");
    expect(built.sql).toContain("node_id = $7 ");
  });

  it("hands tables, columns, typed parameters, arrays, identifiers and objects to drizzle, numbering after its own", () => {
    const when = new Date("2026-11-27T00:00:00Z");
    const built = same(
      sql`select ${uploads.id}, ${sql.identifier("x y")} from ${uploads} where ${uploads.accountId} = ${"acc"} and ${and(eq(uploads.id, "upl_1"), inArray(uploads.filename, ["a.csv", "b.csv"]))}
        and created_at < ${when} and ${uploads.rowCount} in ${[1, 2, 3]} and ${sql.placeholder("p")} is null and id = ${"last"}`,
    );
    expect(built.params.slice(0, 4)).toEqual(["acc", "upl_1", "a.csv", "b.csv"]);
    expect(built.params.at(-1)).toBe("last");
    expect(built.sql).toContain(`"uploads"."id"`);
  });

  it("writes values bound to columns as their columns map them (a timestamp, a JSON column, null)", () => {
    const when = new Date("2026-11-27T10:00:00Z");
    const built = same(sql`select 1 where ${and(eq(emailSends.sentAt, when), eq(emailSends.runId, "run_9"))} and ${eq(uploads.columns, ["email", "name"])}`);
    expect(built.params).toEqual([when.toISOString(), "run_9", JSON.stringify(["email", "name"])]);
    same(sql`select ${sql.param(null, emailSends.sentAt)}::timestamptz, ${sql.param("x", emailSends.to)}`);
  });

  it("a subtree that inlines its parameters is drizzle's; a root that does is left to drizzle", () => {
    same(sql`select ${"a"}, ${sql`${"inlined"}`.inlineParams()}, ${"b"}`);
    expect(fastSqlToQuery(sql`select ${"a"}`.inlineParams(), config())).toBeUndefined();
  });

  it("is what the project's database uses: a statement runs with its parameters where they belong", async () => {
    const db = await getDb();
    expect((db as unknown as { dialect: { sqlToQuery: unknown } }).dialect.sqlToQuery).not.toBe(PgDialect.prototype.sqlToQuery);
    const [row] = await execRows<{ a: string; n: number; t: boolean; z: string | null; c: number }>(
      db,
      sql`select ${"x"}::text as a, ${7}::int as n, ${false}::boolean as t, ${null}::text as z, (select count(*)::int from ${emailSends} where ${emailSends.runId} = ${"no such run"}) as c`,
    );
    expect(row).toEqual({ a: "x", n: 7, t: false, z: null, c: 0 });
  });

  it("withFastSql leaves an object without a dialect alone", () => {
    const plain = { execute: () => undefined };
    expect(withFastSql(plain)).toBe(plain);
  });
});
