// Issue 20, point 10: a CSV with more data rows than UPLOAD_MAX_ROWS (default 1,000,000) is refused with 422 naming
// the limit, on every upload path (they share the parser), and nothing is stored.
import { count } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { POST as upload } from "@/app/api/uploads/route";
import { getDb } from "@/db/client";
import { uploadChunks, uploads } from "@/db/schema";
import { loadConfig, resetConfig } from "@/lib/config";
import { parseCsvStream } from "@/lib/csv/parse-csv";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";

afterEach(() => {
  delete process.env.UPLOAD_MAX_ROWS;
  resetConfig();
});

const csvOf = (rows: number) => `name,email\n${Array.from({ length: rows }, (_, i) => `P${i},p${i}@example.com`).join("\n")}\n`;

async function uploadCsv(token: string, content: string) {
  const form = new FormData();
  form.append("file", new File([content], "people.csv", { type: "text/csv" }));
  return call(upload, { body: form, token });
}

async function stored() {
  const db = await getDb();
  return { uploads: (await db.select({ n: count() }).from(uploads))[0].n, chunks: (await db.select({ n: count() }).from(uploadChunks))[0].n };
}

describe("UPLOAD_MAX_ROWS", () => {
  it("defaults to 1,000,000 rows", () => {
    expect(loadConfig({ DATA_DIR: process.env.DATA_DIR } as unknown as NodeJS.ProcessEnv).uploadMaxRows).toBe(1_000_000);
  });

  it("answers 422 with the limit in the sentence for one row too many, storing nothing; the limit itself passes", async () => {
    process.env.UPLOAD_MAX_ROWS = "12000"; // more than two stored chunks of 5,000 rows, to show they are rolled back
    resetConfig();
    const account = await createTestAccount();
    const before = await stored();
    const res = await uploadCsv(account.token, csvOf(12_001));
    expect(res.status).toBe(422);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.body.code).toBe("invalid_csv");
    expect(res.body.detail).toMatch(/more than 12,000 data rows.*UPLOAD_MAX_ROWS/);
    expect(res.body.errors[0]).toMatchObject({ path: "file", code: "invalid_csv", line: 12_002 });
    expect(await stored()).toEqual(before);

    const ok = await uploadCsv(account.token, csvOf(12_000));
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.rowCount).toBe(12_000);
  });

  it("stops the shared streaming parser (tus and Drive use it) at the limit without reading on", async () => {
    process.env.UPLOAD_MAX_ROWS = "3";
    resetConfig();
    let pulled = 0;
    async function* endless() {
      yield new TextEncoder().encode("a,b\n");
      for (;;) {
        pulled++;
        yield new TextEncoder().encode("1,2\n".repeat(1000));
        if (pulled > 1000) throw new Error("the parser kept reading");
      }
    }
    await expect(parseCsvStream(endless(), async () => {})).rejects.toMatchObject({ code: "invalid_csv", message: expect.stringMatching(/more than 3 data rows/) });
    expect(pulled).toBeLessThan(100);
  });
});
