// Uploads through a proxy that behaves like Vercel's edge (request bodies over 4.5 MB refused with 413 before the
// app sees them): multipart is refused, tus gets through in 4 MiB pieces, and a connection the proxy cuts half-way
// resumes from the server's offset without storing a byte twice.
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { uploads } from "@/db/schema";
import { createTestAccount } from "@/test/support/accounts";
import { startBodyLimitProxy, VERCEL_BODY_LIMIT } from "@/test/support/body-limit-proxy";
import { serveRoutes, type RouteServer } from "@/test/support/route-server";
import { makeCsv, tusUpload, UPLOAD_ROUTES } from "@/test/support/tus";

let app: RouteServer;
let token: string;
const csv = makeCsv(200_000, 3); // ~10 MB: three 4 MiB pieces
const ROWS = 200_000;

beforeAll(async () => {
  app = await serveRoutes(UPLOAD_ROUTES);
  token = (await createTestAccount()).token;
});

afterAll(async () => {
  await app?.close();
});

async function storedUpload(uploadId: string) {
  const db = await getDb();
  const [row] = await db.select().from(uploads).where(eq(uploads.id, uploadId));
  return row;
}

describe("through a proxy with Vercel's 4.5 MB body limit", () => {
  it("refuses the multipart upload (the proxy's 413, the app never sees it) and lets tus through", async () => {
    expect(csv.length).toBeGreaterThan(2 * VERCEL_BODY_LIMIT);
    const proxy = await startBodyLimitProxy({ target: app.url });
    try {
      const form = new FormData();
      form.append("file", new File([new Uint8Array(csv)], "big.csv", { type: "text/csv" }));
      const multipart = await fetch(`${proxy.url}/api/uploads`, { method: "POST", body: form, headers: { Authorization: `Bearer ${token}` } });
      expect(multipart.status).toBe(413);
      expect(await multipart.text()).toContain("FUNCTION_PAYLOAD_TOO_LARGE");
      expect(proxy.refused).toBe(1);
      expect(app.requests.filter((r) => r.method === "POST" && r.path === "/api/uploads")).toEqual([]);

      const result = await tusUpload(proxy.url, token, csv);
      expect(result.offsets).toEqual([4 * 1024 * 1024, 8 * 1024 * 1024, csv.length]);
      expect(await storedUpload(result.uploadId!)).toMatchObject({ rowCount: ROWS, sizeBytes: csv.length });
      expect(proxy.refused).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  it("resumes from the server's offset after the proxy cuts the connection half-way, storing each byte once", async () => {
    const proxy = await startBodyLimitProxy({ target: app.url, cutAfterBytes: Math.floor(csv.length / 2) });
    try {
      const heads: number[] = [];
      const result = await tusUpload(proxy.url, token, csv, {
        onAfterResponse: (req, res) => {
          if (req.getMethod() === "HEAD") heads.push(Number(res.getHeader("Upload-Offset")));
        },
      });
      expect(proxy.cuts).toBe(1);
      // The resume started from what the server had stored: the first piece and the part of the second that arrived.
      // On a busy machine the client's first HEAD can come while the server is still storing the cut piece's bytes:
      // it then answers the first piece's end, the PATCH from there meets 409 (the offset moved on) and the client asks
      // again. Either way offsets only move forward and the last one is past the first piece.
      expect(heads.length).toBeGreaterThanOrEqual(1);
      expect(heads.length).toBeLessThanOrEqual(2);
      expect(heads.slice(0, -1)).toEqual(Array(heads.length - 1).fill(4 * 1024 * 1024));
      expect(heads.at(-1)).toBeGreaterThan(4 * 1024 * 1024);
      expect(heads.at(-1)).toBeLessThanOrEqual(Math.floor(csv.length / 2));
      const stored = await storedUpload(result.uploadId!);
      // Every byte once: a byte stored twice would lengthen the file and break its rows.
      expect(stored).toMatchObject({ rowCount: ROWS, sizeBytes: csv.length });
    } finally {
      await proxy.close();
    }
  });
});
