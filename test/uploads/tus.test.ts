import { count, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { tusUploadPieces, tusUploads, uploads } from "@/db/schema";
import { getConfig } from "@/lib/config";
import { expireTusUploads } from "@/lib/services/uploads/expire-tus-uploads";
import { createTestAccount } from "@/test/support/accounts";
import { serveRoutes, type RouteServer } from "@/test/support/route-server";
import { makeCsv, problemOf, tusUpload, UPLOAD_ROUTES } from "@/test/support/tus";

type Account = Awaited<ReturnType<typeof createTestAccount>>;

let server: RouteServer;
let alice: Account;
let bob: Account;

beforeAll(async () => {
  server = await serveRoutes(UPLOAD_ROUTES);
  alice = await createTestAccount();
  bob = await createTestAccount();
});

afterAll(async () => {
  await server?.close();
});

/** One raw tus request (the protocol details tus-js-client never gets wrong). */
async function tus(method: string, path: string, token: string | null, headers: Record<string, string> = {}, body?: BodyInit) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { "Tus-Resumable": "1.0.0", ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers },
    body,
  });
  const text = method === "HEAD" ? "" : await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as any) : null };
}

async function create(token: string, length: number, filename = "people.csv") {
  const res = await tus("POST", "/api/uploads/tus", token, {
    "Upload-Length": String(length),
    "Upload-Metadata": `filename ${Buffer.from(filename).toString("base64")}`,
  });
  expect(res.status).toBe(201);
  const location = res.headers.get("location")!;
  expect(location).toMatch(/^\/api\/uploads\/tus\/tus_[A-Za-z0-9_-]{22}$/);
  return location;
}

const patch = (token: string, path: string, offset: number, bytes: Uint8Array, contentType = "application/offset+octet-stream") =>
  tus("PATCH", path, token, { "Upload-Offset": String(offset), "Content-Type": contentType }, bytes as Uint8Array<ArrayBuffer>);

async function piecesStored(path: string) {
  const db = await getDb();
  const id = path.split("/").pop()!;
  const [row] = await db.select({ n: count(), bytes: sql<number>`coalesce(sum(length(${tusUploadPieces.bytes})), 0)::int` }).from(tusUploadPieces).where(eq(tusUploadPieces.tusUploadId, id));
  return { pieces: row.n, bytes: Number(row.bytes) };
}

function expectProblem(res: { status: number; headers: Headers; body: any }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect(res.body).toMatchObject({ type: "about:blank", status, code });
}

describe("tus discovery and creation", () => {
  it("OPTIONS names the version, the extensions and UPLOAD_MAX_BYTES as Tus-Max-Size", async () => {
    const res = await tus("OPTIONS", "/api/uploads/tus", null);
    expect(res.status).toBe(204);
    expect(res.headers.get("tus-version")).toBe("1.0.0");
    expect(res.headers.get("tus-extension")).toBe("creation,termination,expiration");
    expect(res.headers.get("tus-max-size")).toBe(String(getConfig().uploadMaxBytes));
  });

  it("POST needs an account (401), an Upload-Length within Tus-Max-Size (413) and tus 1.0.0 (412)", async () => {
    expectProblem(await tus("POST", "/api/uploads/tus", null, { "Upload-Length": "10" }), 401, "unauthorized");
    expectProblem(await tus("POST", "/api/uploads/tus", alice.token, { "Upload-Length": String(getConfig().uploadMaxBytes + 1) }), 413, "payload_too_large");
    expectProblem(await tus("POST", "/api/uploads/tus", alice.token, {}), 400, "bad_request");
    const old = await tus("POST", "/api/uploads/tus", alice.token, { "Upload-Length": "10", "Tus-Resumable": "0.2.2" });
    expectProblem(old, 412, "unsupported_tus_version");
    expect(old.headers.get("tus-version")).toBe("1.0.0");
  });
});

describe("uploading with tus-js-client", () => {
  it("sends a file in pieces; the last PATCH names the upload, parsed like a multipart upload", async () => {
    const csv = makeCsv(3000); // ~100 KB in 16 KiB pieces
    const result = await tusUpload(server.url, alice.token, csv, { chunkSize: 16 * 1024 });
    expect(result.uploadId).toMatch(/^upl_[A-Za-z0-9_-]{22}$/);
    expect(result.offsets.length).toBe(Math.ceil(csv.length / (16 * 1024)));
    expect(result.offsets.at(-1)).toBe(csv.length);
    const db = await getDb();
    const [stored] = await db.select().from(uploads).where(eq(uploads.id, result.uploadId!));
    expect(stored).toMatchObject({ accountId: alice.id, filename: "people.csv", rowCount: 3000, sizeBytes: csv.length });
    expect(stored.columns).toHaveLength(8);
    // The pieces are gone once parsed; HEAD still answers with the upload (a lost final response is recoverable).
    expect(await piecesStored(result.url!)).toEqual({ pieces: 0, bytes: 0 });
    const head = await tus("HEAD", new URL(result.url!).pathname, alice.token);
    expect(head.status).toBe(200);
    expect(head.headers.get("upload-offset")).toBe(String(csv.length));
    expect(head.headers.get("flowmail-upload-id")).toBe(result.uploadId);
  });

  it("answers an invalid CSV on the last PATCH with 422 invalid_csv and its line, and stores no upload", async () => {
    const db = await getDb();
    const [before] = await db.select({ n: count() }).from(uploads);
    const csv = Buffer.concat([makeCsv(2000), Buffer.from("a,b,c,d,e,f,g,h,i,j\n")]);
    const error = await tusUpload(server.url, alice.token, csv, { chunkSize: 32 * 1024 }).then(
      () => null,
      (e: unknown) => e,
    );
    const { status, body } = problemOf(error);
    expect(status).toBe(422);
    expect(body).toMatchObject({ status: 422, code: "invalid_csv", line: 2002, errors: [{ path: "file", code: "invalid_csv", line: 2002 }] });
    expect(body.detail).toContain("2002");
    const [after] = await db.select({ n: count() }).from(uploads);
    expect(after.n).toBe(before.n);
  });

  it("resumes from the offset HEAD reports (a new client with the upload URL)", async () => {
    const csv = makeCsv(500);
    const path = await create(alice.token, csv.length);
    expect((await patch(alice.token, path, 0, csv.subarray(0, 5000))).status).toBe(204);
    const head = await tus("HEAD", path, alice.token);
    expect(head.headers.get("upload-offset")).toBe("5000");
    expect(head.headers.get("upload-length")).toBe(String(csv.length));
    expect(head.headers.get("cache-control")).toBe("no-store");
    const result = await tusUpload(server.url, alice.token, csv, { uploadUrl: `${server.url}${path}` });
    expect(result.offsets).toEqual([csv.length]); // one PATCH: only the missing bytes
    const db = await getDb();
    const [stored] = await db.select().from(uploads).where(eq(uploads.id, result.uploadId!));
    expect(stored.rowCount).toBe(500);
  });
});

describe("PATCH rules", () => {
  it("refuses a wrong offset with 409 and stores nothing", async () => {
    const path = await create(alice.token, 100);
    expect((await patch(alice.token, path, 0, new Uint8Array(10).fill(97))).status).toBe(204);
    expectProblem(await patch(alice.token, path, 0, new Uint8Array(10).fill(98)), 409, "conflict");
    expectProblem(await patch(alice.token, path, 20, new Uint8Array(10).fill(98)), 409, "conflict");
    expect(await piecesStored(path)).toEqual({ pieces: 1, bytes: 10 });
  });

  it("refuses another content type (415), a missing offset (400), more than 4 MiB (413) or past the length (413)", async () => {
    const path = await create(alice.token, 100);
    expectProblem(await patch(alice.token, path, 0, new Uint8Array(10), "text/csv"), 415, "unsupported_media_type");
    expectProblem(await tus("PATCH", path, alice.token, { "Content-Type": "application/offset+octet-stream" }, "abc"), 400, "bad_request");
    expectProblem(await patch(alice.token, path, 0, new Uint8Array(101)), 413, "payload_too_large");
    const big = await create(alice.token, 5 * 1024 * 1024);
    expectProblem(await patch(alice.token, big, 0, new Uint8Array(4 * 1024 * 1024 + 1)), 413, "payload_too_large");
    expect(await piecesStored(path)).toEqual({ pieces: 0, bytes: 0 });
    expect(await piecesStored(big)).toEqual({ pieces: 0, bytes: 0 });
  });

  it("answers another account's upload 404 on HEAD, PATCH and DELETE, and leaves it as it was", async () => {
    const path = await create(alice.token, 100);
    await patch(alice.token, path, 0, new Uint8Array(10).fill(97));
    expect((await tus("HEAD", path, bob.token)).status).toBe(404);
    expectProblem(await patch(bob.token, path, 10, new Uint8Array(10)), 404, "not_found");
    expectProblem(await tus("DELETE", path, bob.token), 404, "not_found");
    expect((await tus("HEAD", path, alice.token)).headers.get("upload-offset")).toBe("10");
    expect(await piecesStored(path)).toEqual({ pieces: 1, bytes: 10 });
  });

  it("DELETE terminates an upload and its bytes (204, then 404)", async () => {
    const path = await create(alice.token, 100);
    await patch(alice.token, path, 0, new Uint8Array(10).fill(97));
    expect((await tus("DELETE", path, alice.token)).status).toBe(204);
    expect((await tus("HEAD", path, alice.token)).status).toBe(404);
    expect(await piecesStored(path)).toEqual({ pieces: 0, bytes: 0 });
  });
});

describe("expiry", () => {
  it("an unfinished upload older than 24 h answers 410, and the sweep removes it with its bytes", async () => {
    const path = await create(alice.token, 100);
    const fresh = await create(alice.token, 100);
    await patch(alice.token, path, 0, new Uint8Array(10).fill(97));
    const head = await patch(alice.token, fresh, 0, new Uint8Array(10).fill(97));
    expect(new Date(head.headers.get("upload-expires")!).getTime()).toBeGreaterThan(Date.now() + 23 * 3600_000);
    const db = await getDb();
    const id = path.split("/").pop()!;
    const dayAgo = sql`now() - interval '25 hours'`;
    await db.update(tusUploads).set({ createdAt: dayAgo, expiresAt: sql`now() - interval '1 hour'` }).where(eq(tusUploads.id, id));
    expect((await tus("HEAD", path, alice.token)).status).toBe(410);
    expectProblem(await patch(alice.token, path, 10, new Uint8Array(10)), 410, "upload_expired");
    expect(await expireTusUploads()).toBeGreaterThanOrEqual(1);
    expect((await tus("HEAD", path, alice.token)).status).toBe(404);
    expect(await piecesStored(path)).toEqual({ pieces: 0, bytes: 0 });
    expect((await tus("HEAD", fresh, alice.token)).headers.get("upload-offset")).toBe("10");
  });
});
