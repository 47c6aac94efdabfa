// Uploads take CSV files only: a .csv name (any declared type) or a nameless file sent as CSV or as nothing in
// particular. A .txt, .xlsx, .json or an image is refused with 415 problem+json naming the file, before a byte is
// stored — for multipart and for tus (at creation, from its filename/filetype metadata).
import { count } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { tusUploads, uploads } from "@/db/schema";
import { createTestAccount } from "@/test/support/accounts";
import { serveRoutes, type RouteServer } from "@/test/support/route-server";
import { problemOf, tusUpload, UPLOAD_ROUTES } from "@/test/support/tus";

let server: RouteServer;
let token: string;

beforeAll(async () => {
  server = await serveRoutes(UPLOAD_ROUTES);
  token = (await createTestAccount()).token;
});

afterAll(async () => {
  await server?.close();
});

const CSV = "email,name\nann@example.com,Ann\n";

async function stored() {
  const db = await getDb();
  const [u] = await db.select({ n: count() }).from(uploads);
  const [t] = await db.select({ n: count() }).from(tusUploads);
  return { uploads: u.n, tus: t.n };
}

async function multipart(filename: string, type: string, content = CSV) {
  const data = new FormData();
  data.append("file", new File([content], filename, { type }));
  const res = await fetch(`${server.url}/api/uploads`, { method: "POST", headers: { Authorization: `Bearer ${token}` }, body: data });
  return { status: res.status, contentType: res.headers.get("content-type"), body: (await res.json()) as any };
}

describe("multipart uploads", () => {
  it.each([
    ["notes.txt", "text/plain", /"notes\.txt" is not a CSV file \(its name ends in "\.txt"\)/],
    ["people.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", /"people\.xlsx" is not a CSV file/],
    ["rows.json", "application/json", /"rows\.json" is not a CSV file/],
    ["data.txt", "text/csv", /"data\.txt" is not a CSV file/],
    ["picture", "image/png", /"picture" is not a CSV file \(it was sent as image\/png\)/],
  ])("refuses %s (%s) with 415 naming the file, storing nothing", async (filename, type, detail) => {
    const before = await stored();
    const res = await multipart(filename, type);
    expect(res.status).toBe(415);
    expect(res.contentType).toBe("application/problem+json");
    expect(res.body).toMatchObject({ status: 415, code: "unsupported_media_type" });
    expect(res.body.detail).toMatch(detail);
    expect(await stored()).toEqual(before);
  });

  it.each([
    ["people.csv", "text/csv"],
    ["PEOPLE.CSV", "application/vnd.ms-excel"],
    ["export.csv", "application/octet-stream"],
    ["rows", "text/csv"],
    ["rows", "application/octet-stream"],
  ])("accepts %s (%s)", async (filename, type) => {
    const res = await multipart(filename, type);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ rowCount: 1, columns: ["email", "name"] });
  });
});

describe("tus uploads", () => {
  it("refuses a .txt at creation with 415 naming the file, before any piece is sent", async () => {
    const before = await stored();
    const error = await tusUpload(server.url, token, Buffer.from(CSV), { metadata: { filename: "notes.txt", filetype: "text/plain" }, retryDelays: [] }).then(
      () => null,
      (e: unknown) => e,
    );
    const { status, body } = problemOf(error);
    expect(status).toBe(415);
    expect(body).toMatchObject({ code: "unsupported_media_type" });
    expect(body.detail).toMatch(/"notes\.txt" is not a CSV file/);
    expect(await stored()).toEqual(before);
  });

  it("accepts a .csv", async () => {
    const result = await tusUpload(server.url, token, Buffer.from(CSV), { metadata: { filename: "people.csv", filetype: "text/csv" } });
    expect(result.uploadId).toMatch(/^upl_/);
  });
});
