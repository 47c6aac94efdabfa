import { describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { uploadChunks, uploads } from "@/db/schema";
import { newId } from "@/lib/ids";
import { createTestAccount } from "@/test/support/accounts";
import { readUploadRows } from "./upload-rows";

describe("readUploadRows", () => {
  it("reads every row by default and pages across chunk boundaries", async () => {
    const db = await getDb();
    const account = await createTestAccount();
    const id = newId("upl");
    const columns = ["email", "__proto__"];
    await db.insert(uploads).values({ id, accountId: account.id, filename: "a.csv", rowCount: 5, columns, sizeBytes: 10 });
    await db.insert(uploadChunks).values([
      { uploadId: id, chunkIndex: 0, firstRow: 0, rowCount: 3, rows: [["a", "1"], ["b", "2"], ["c", "3"]] },
      { uploadId: id, chunkIndex: 1, firstRow: 3, rowCount: 2, rows: [["d", "4"], ["e"]] },
    ]);
    const all = await readUploadRows(db, { id, columns });
    expect(all.map((r) => r.email)).toEqual(["a", "b", "c", "d", "e"]);
    expect(all[4]["__proto__"]).toBe("");
    // Nothing inherited: the prototype is empty and its own prototype is null.
    expect(Object.getOwnPropertyNames(Object.getPrototypeOf(all[0]))).toEqual([]);
    expect(Object.getPrototypeOf(Object.getPrototypeOf(all[0]))).toBeNull();
    expect("toString" in all[0] || "constructor" in all[0]).toBe(false);
    expect(Object.keys(all[4])).toEqual(["email", "__proto__"]);
    const middle = await readUploadRows(db, { id, columns }, 2, 2);
    expect(middle.map((r) => r.email)).toEqual(["c", "d"]);
  });
});
