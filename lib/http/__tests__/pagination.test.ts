import { PgDialect, bigint, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { describe, expect, it } from "vitest";
import { AppError } from "@/lib/errors";
import { decodeCursor, descendingAfter, encodeCursor, newestFirstAfter, page } from "@/lib/http/pagination";

const items = pgTable("items", {
  id: text("id").primaryKey(),
  seq: bigint("seq", { mode: "number" }).notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
});
const dialect = new PgDialect();
const forged = (k: unknown) => Buffer.from(JSON.stringify({ k, id: "x" })).toString("base64url");

function statusOf(fn: () => unknown): number | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof AppError) return error.status;
    throw error;
  }
  return undefined;
}

describe("keyset pagination helpers", () => {
  it("pages limit + 1 rows into a page and the cursor of its last row, which decodes back", () => {
    const rows = [{ id: "c", seq: 3 }, { id: "b", seq: 2 }, { id: "a", seq: 1 }];
    const first = page(rows, 2, (row) => ({ k: row.seq, id: row.id }));
    expect(first.items.map((row) => row.id)).toEqual(["c", "b"]);
    expect(decodeCursor(first.nextCursor!)).toEqual({ k: 2, id: "b" });
    expect(page(rows.slice(0, 2), 2, (row) => ({ k: row.seq, id: row.id })).nextCursor).toBeNull();
  });

  it("builds the newest-first condition on (at, id) and the descending one on a unique integer", () => {
    expect(newestFirstAfter(undefined, items.createdAt, items.id)).toBeUndefined();
    expect(descendingAfter(undefined, items.seq)).toBeUndefined();
    const at = "2026-01-02T03:04:05.000Z";
    const byDate = dialect.sqlToQuery(newestFirstAfter(decodeCursor(encodeCursor({ k: at, id: "m" })), items.createdAt, items.id)!);
    expect(byDate.sql).toBe('("items"."created_at" < $1 or ("items"."created_at" = $2 and "items"."id" < $3))');
    expect(byDate.params).toEqual([at, at, "m"]);
    const bySeq = dialect.sqlToQuery(descendingAfter(decodeCursor(encodeCursor({ k: 41, id: "r" })), items.seq)!);
    expect(bySeq).toMatchObject({ sql: '"items"."seq" < $1', params: [41] });
  });

  it("answers 422 to a forged or corrupted cursor, never a 500", () => {
    expect(statusOf(() => decodeCursor("garbage!!"))).toBe(422);
    expect(statusOf(() => decodeCursor(Buffer.from('{"t":1}').toString("base64url")))).toBe(422);
    for (const k of ["x", "5", 0, -1, 1.5, 2 ** 60]) {
      expect(statusOf(() => descendingAfter(decodeCursor(forged(k)), items.seq))).toBe(422);
    }
    for (const k of ["not a date", 5]) {
      expect(statusOf(() => newestFirstAfter(decodeCursor(forged(k)), items.createdAt, items.id))).toBe(422);
    }
  });
});
