// Each account may keep UPLOAD_QUOTA_BYTES of uploads; resumable uploads still receiving count at their declared
// length, so a pile of empty 50 MiB reservations is refused once it reaches the quota.
import { and, count, eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import * as uploadsRoute from "@/app/api/uploads/route";
import { getDb } from "@/db/client";
import { tusUploads, uploads } from "@/db/schema";
import { resetConfig } from "@/lib/config";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";
import { serveRoutes, type RouteServer } from "@/test/support/route-server";
import { UPLOAD_ROUTES } from "@/test/support/tus";

const MIB = 1024 * 1024;
let server: RouteServer;

beforeAll(async () => {
  server = await serveRoutes(UPLOAD_ROUTES);
});
afterAll(async () => {
  await server?.close();
});
afterEach(() => {
  delete process.env.UPLOAD_QUOTA_BYTES;
  resetConfig();
});

const reserve = (token: string, length: number) =>
  fetch(`${server.url}/api/uploads/tus`, {
    method: "POST",
    headers: { "Tus-Resumable": "1.0.0", Authorization: `Bearer ${token}`, "Upload-Length": String(length), "Upload-Metadata": `filename ${Buffer.from("a.csv").toString("base64")}` },
  });

function form(csv: string): FormData {
  const data = new FormData();
  data.append("file", new Blob([csv], { type: "text/csv" }), "people.csv");
  return data;
}

describe("storage quota", () => {
  it("refuses tus reservations past the quota (413 problem+json); another account is not affected", async () => {
    process.env.UPLOAD_QUOTA_BYTES = String(200 * MIB);
    resetConfig();
    const alice = await createTestAccount();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await reserve(alice.token, 50 * MIB)).status);
    expect(statuses).toEqual([201, 201, 201, 201, 413, 413]);
    const refused = await reserve(alice.token, 50 * MIB);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    expect(await refused.json()).toMatchObject({ status: 413, code: "payload_too_large" });
    const db = await getDb();
    const [held] = await db.select({ n: count() }).from(tusUploads).where(eq(tusUploads.accountId, alice.id));
    expect(held.n).toBe(4);
    expect((await reserve((await createTestAccount()).token, 50 * MIB)).status).toBe(201);
  });

  it("refuses a multipart upload that would pass the quota, storing nothing", async () => {
    process.env.UPLOAD_QUOTA_BYTES = "2000";
    resetConfig();
    const bob = await createTestAccount();
    const csv = `email,name\n${Array.from({ length: 40 }, (_, i) => `p${i}@example.com,Person ${i}`).join("\n")}\n`;
    const first = await call(uploadsRoute.POST, { method: "POST", path: "/api/uploads", body: form(csv), token: bob.token });
    expect(first.status, first.text).toBe(201);
    const second = await call(uploadsRoute.POST, { method: "POST", path: "/api/uploads", body: form(csv), token: bob.token });
    expect(second.status).toBe(413);
    expect(second.body.code).toBe("payload_too_large");
    const db = await getDb();
    const [kept] = await db.select({ n: count() }).from(uploads).where(and(eq(uploads.accountId, bob.id)));
    expect(kept.n).toBe(1);
  });
});
