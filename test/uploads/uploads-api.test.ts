import { count, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { resetConfig } from "@/lib/config";
import { getDb } from "@/db/client";
import { uploadChunks, uploads } from "@/db/schema";
import * as uploadsRoute from "@/app/api/uploads/route";
import * as uploadRoute from "@/app/api/uploads/[uploadId]/route";
import * as rowsRoute from "@/app/api/uploads/[uploadId]/rows/route";
import { call } from "@/test/support/http";
import { createTestAccount } from "@/test/support/accounts";

type Account = Awaited<ReturnType<typeof createTestAccount>>;

function form(content: BlobPart | BlobPart[], filename = "people.csv", field = "file"): FormData {
  const data = new FormData();
  data.append(field, new File(Array.isArray(content) ? content : [content], filename, { type: "text/csv" }));
  return data;
}

const upload = (token: string, body: BodyInit, headers: Record<string, string> = {}) =>
  call(uploadsRoute.POST, { method: "POST", path: "/api/uploads", body, token, headers });

async function tableCounts() {
  const db = await getDb();
  const [u] = await db.select({ n: count() }).from(uploads);
  const [c] = await db.select({ n: count() }).from(uploadChunks);
  return { uploads: u.n, chunks: c.n };
}

/** Asserts the contract's problem+json and that nothing was stored. */
async function expectRefused(send: () => Promise<{ status: number; headers: Headers; body: any }>, status: number, code: string) {
  const before = await tableCounts();
  const res = await send();
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect(res.body).toMatchObject({ type: "about:blank", status, code });
  expect(await tableCounts()).toEqual(before);
  return res.body;
}

let alice: Account;
let bob: Account;

beforeAll(async () => {
  alice = await createTestAccount();
  bob = await createTestAccount();
});

describe("POST /api/uploads", () => {
  it("stores a CSV and answers 201 with its metadata", async () => {
    const text = "\uFEFFname;email\r\nAda;ada@example.com\r\n\r\nBob\r\n";
    const res = await upload(alice.token, form(text, "../../etc/passwd.csv"));
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      uploadId: expect.stringMatching(/^upl_[A-Za-z0-9_-]{22}$/),
      filename: "passwd.csv",
      rowCount: 2,
      columns: ["name", "email"],
      sizeBytes: new TextEncoder().encode(text).length,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const detail = await call(uploadRoute.GET, { token: alice.token, params: { uploadId: res.body.uploadId } });
    expect(detail.status).toBe(200);
    expect(detail.body.preview).toEqual([
      { name: "Ada", email: "ada@example.com" },
      { name: "Bob", email: "" },
    ]);
  });

  it("stores many rows in chunks and pages through them", async () => {
    const lines = ["id,value"];
    for (let i = 0; i < 12_345; i++) lines.push(`${i},v${i}`);
    const res = await upload(alice.token, form(lines.join("\n")));
    expect(res.status).toBe(201);
    expect(res.body.rowCount).toBe(12_345);
    const db = await getDb();
    const chunks = await db.select({ n: count() }).from(uploadChunks).where(eq(uploadChunks.uploadId, res.body.uploadId));
    expect(chunks[0].n).toBe(3);

    const detail = await call(uploadRoute.GET, { token: alice.token, params: { uploadId: res.body.uploadId } });
    expect(detail.body.preview).toHaveLength(20);
    const rows = await call(rowsRoute.GET, {
      path: "/api/uploads/x/rows?offset=4998&limit=4",
      token: alice.token,
      params: { uploadId: res.body.uploadId },
    });
    expect(rows.status).toBe(200);
    expect(rows.body).toEqual({
      total: 12_345,
      items: [4998, 4999, 5000, 5001].map((i) => ({ id: String(i), value: `v${i}` })),
    });
    const defaults = await call(rowsRoute.GET, { path: "/api/uploads/x/rows", token: alice.token, params: { uploadId: res.body.uploadId } });
    expect(defaults.body.items).toHaveLength(100);
    const tooMany = await call(rowsRoute.GET, {
      path: "/api/uploads/x/rows?limit=1001",
      token: alice.token,
      params: { uploadId: res.body.uploadId },
    });
    expect(tooMany.status).toBe(422);
  });

  it("keeps __proto__ and constructor headers as plain data", async () => {
    const res = await upload(alice.token, form("__proto__,constructor\n{\"a\":1},x\n"));
    expect(res.status).toBe(201);
    const rows = await call(rowsRoute.GET, { path: "/api/uploads/x/rows", token: alice.token, params: { uploadId: res.body.uploadId } });
    expect(rows.body.items).toEqual(JSON.parse('[{"__proto__":"{\\"a\\":1}","constructor":"x"}]'));
    expect(Object.getPrototypeOf(rows.body.items[0])).toBe(Object.prototype);
    expect(rows.text).toContain('"__proto__":"{\\"a\\":1}"');
  });

  it("accepts a header-only file with rowCount 0", async () => {
    const res = await upload(alice.token, form("a,b\n"));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ rowCount: 0, columns: ["a", "b"] });
  });

  it("refuses bad CSV with the line, storing nothing", async () => {
    const body = await expectRefused(() => upload(alice.token, form("a,b\n1,2\n3,4,5\n")), 422, "invalid_csv");
    expect(body.errors).toEqual([{ path: "file", code: "invalid_csv", message: expect.stringMatching(/Line 3/), line: 3 }]);
    await expectRefused(() => upload(alice.token, form("a,a\n1,2\n")), 422, "invalid_csv");
    await expectRefused(() => upload(alice.token, form("")), 422, "invalid_csv");
  });

  it("refuses a PNG renamed .csv", async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
    const body = await expectRefused(() => upload(alice.token, form(png, "photo.csv")), 422, "invalid_csv");
    expect(body.errors[0].line).toBe(1);
  });

  it("refuses a rows-valid file that turns invalid late, storing none of its chunks", async () => {
    const lines = ["id,value"];
    for (let i = 0; i < 11_000; i++) lines.push(`${i},v${i}`);
    lines.push("oops,too,many");
    const body = await expectRefused(() => upload(alice.token, form(lines.join("\n"))), 422, "invalid_csv");
    expect(body.errors[0].line).toBe(11_002);
  });

  it("refuses a 50 MiB single line after reading about 1 MiB of it", async () => {
    // The line is streamed and the bytes handed over are counted: the parser must give up once the record passes
    // 1 MiB, not gather (and rescan) the whole 50 MiB.
    let sent = 0;
    const boundary = "----flowmailline";
    const head = new TextEncoder().encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="line.csv"\r\nContent-Type: text/csv\r\n\r\n`,
    );
    const block = new Uint8Array(64 * 1024).fill(0x61);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(head);
      },
      pull(controller) {
        if (sent >= 50 * 1024 * 1024) return controller.close();
        sent += block.length;
        controller.enqueue(block);
      },
    });
    const body = await expectRefused(() => upload(alice.token, stream, { "content-type": `multipart/form-data; boundary=${boundary}` }), 422, "invalid_csv");
    expect(body.detail).toMatch(/Line 1 is longer than 1 MiB/);
    expect(sent).toBeLessThan(8 * 1024 * 1024);
  });

  it("refuses 100,000 columns at the header, before any per-column work", async () => {
    const header = Array.from({ length: 100_000 }, (_, i) => `c${i}`).join(",");
    const body = await expectRefused(() => upload(alice.token, form(`${header}\n1,2\n`)), 422, "invalid_csv");
    // Counted whole and refused by the column limit (names are checked only after it).
    expect(body.detail).toBe("Line 1: the header has 100000 columns; at most 500 are allowed (too many columns).");
  });

  it("refuses a body over the limit at once when Content-Length says so", async () => {
    await expectRefused(
      () => upload(alice.token, "x", { "content-type": "multipart/form-data; boundary=abc", "content-length": String(60 * 1024 * 1024) }),
      413,
      "payload_too_large",
    );
  });

  it("refuses an oversized streamed body without Content-Length, reading only up to the limit", async () => {
    // A 1 MiB limit keeps the test fast; the mechanism is the same for the default 50 MiB.
    process.env.UPLOAD_MAX_BYTES = String(1024 * 1024);
    resetConfig();
    onTestFinished(() => {
      delete process.env.UPLOAD_MAX_BYTES;
      resetConfig();
    });
    let sent = 0;
    const boundary = "----flowmailtest";
    const head = new TextEncoder().encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.csv"\r\nContent-Type: text/csv\r\n\r\na,b\n`,
    );
    const block = new TextEncoder().encode("1,2\n".repeat(16 * 1024));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(head);
      },
      pull(controller) {
        // an endless body: only a size check while streaming can stop it
        sent += block.length;
        controller.enqueue(block);
      },
    });
    await expectRefused(
      () => upload(alice.token, stream, { "content-type": `multipart/form-data; boundary=${boundary}` }),
      413,
      "payload_too_large",
    );
    expect(sent).toBeLessThan(3 * 1024 * 1024);
  });

  it("answers 415 to a JSON body naming a server-side filepath", async () => {
    await expectRefused(
      () => call(uploadsRoute.POST, { json: { filepath: "/etc/passwd" }, token: alice.token }),
      415,
      "unsupported_media_type",
    );
  });

  it("answers 400 missing_file when no `file` field is sent", async () => {
    await expectRefused(() => upload(alice.token, form("a\n1\n", "x.csv", "document")), 400, "missing_file");
    const fieldsOnly = new FormData();
    fieldsOnly.append("file", "a,b");
    await expectRefused(() => upload(alice.token, fieldsOnly), 400, "missing_file");
  });

  it("answers 400 to a malformed multipart body", async () => {
    await expectRefused(
      () => upload(alice.token, "--abc\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\n\r\na,b\n1,2", {
        "content-type": "multipart/form-data; boundary=abc",
      }),
      400,
      "bad_request",
    );
  });

  it("requires a token", async () => {
    const res = await call(uploadsRoute.POST, { body: form("a\n1") });
    expect(res.status).toBe(401);
  });
});

describe("listing, reading and deleting uploads", () => {
  it("lists only the account's uploads, newest first, with pagination", async () => {
    const carol = await createTestAccount();
    const ids: string[] = [];
    for (const name of ["one.csv", "two.csv", "three.csv"]) {
      const res = await upload(carol.token, form("a\n1\n", name));
      ids.push(res.body.uploadId);
    }
    await upload(bob.token, form("a\n1\n", "bobs.csv"));
    const first = await call(uploadsRoute.GET, { path: "/api/uploads?limit=2", token: carol.token });
    expect(first.status).toBe(200);
    expect(first.body.items.map((u: { uploadId: string }) => u.uploadId)).toEqual([ids[2], ids[1]]);
    const second = await call(uploadsRoute.GET, {
      path: `/api/uploads?limit=2&cursor=${first.body.nextCursor}`,
      token: carol.token,
    });
    expect(second.body).toEqual({ items: [expect.objectContaining({ uploadId: ids[0], filename: "one.csv" })], nextCursor: null });
  });

  it("answers 422 to a forged cursor and 404 to any unknown id", async () => {
    const forged = Buffer.from(JSON.stringify({ k: "not a date", id: "x" })).toString("base64url");
    const res = await call(uploadsRoute.GET, { path: `/api/uploads?cursor=${forged}`, token: alice.token });
    expect(res.status).toBe(422);
    expect(res.body.errors[0]).toMatchObject({ path: "query.cursor", code: "invalid_cursor" });
    for (const uploadId of ["upl_" + "x".repeat(500), "nope", "__proto__"]) {
      expect((await call(uploadRoute.GET, { token: alice.token, params: { uploadId } })).status).toBe(404);
    }
  });

  it("answers 404 for another account's upload, and after delete", async () => {
    const res = await upload(alice.token, form("a\n1\n"));
    const uploadId = res.body.uploadId;
    for (const handler of [uploadRoute.GET, rowsRoute.GET]) {
      const other = await call(handler, { token: bob.token, params: { uploadId } });
      expect(other.status).toBe(404);
      expect(other.body.code).toBe("not_found");
    }
    expect((await call(uploadRoute.DELETE, { method: "DELETE", token: bob.token, params: { uploadId } })).status).toBe(404);
    const deleted = await call(uploadRoute.DELETE, { method: "DELETE", token: alice.token, params: { uploadId } });
    expect(deleted.status).toBe(204);
    expect((await call(uploadRoute.GET, { token: alice.token, params: { uploadId } })).status).toBe(404);
    expect((await call(uploadRoute.DELETE, { method: "DELETE", token: alice.token, params: { uploadId } })).status).toBe(404);
    const list = await call(uploadsRoute.GET, { path: "/api/uploads?limit=100", token: alice.token });
    expect(list.body.items.map((u: { uploadId: string }) => u.uploadId)).not.toContain(uploadId);
  });
});
