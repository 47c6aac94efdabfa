/**
 * Two app instances (two processes) on one PostgreSQL database behind one address, the proxy sending each request
 * to the other instance in turn: the pieces of one tus upload alternate between them, and the upload is one correct
 * upload — any instance takes the next piece because every received byte is in PostgreSQL. PostgreSQL only
 * (TEST_DATABASE_URL): PGlite serves one process.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { tusUploads, uploads } from "@/db/schema";
import { createTestAccount } from "@/test/support/accounts";
import { startBodyLimitProxy } from "@/test/support/body-limit-proxy";
import { makeCsv, tusUpload } from "@/test/support/tus";

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
const instances: ChildProcess[] = [];

function startInstance(): Promise<string> {
  const child = spawn(process.execPath, ["--conditions=react-server", "--import", "tsx", "test/faults/tus-instance.ts"], {
    cwd: process.cwd(),
    env: { ...process.env, DATABASE_URL: process.env.TEST_DATABASE_CURRENT_URL!, LOG_LEVEL: "error" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  instances.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const url = /listening (\S+)/.exec(out)?.[1];
      if (url) resolve(url);
    });
    child.on("exit", (code) => reject(new Error(`instance exited with ${code}`)));
  });
}

describe.runIf(onPostgres)("two app instances on one PostgreSQL (tus pieces alternating)", () => {
  let urls: string[];

  beforeAll(async () => {
    urls = await Promise.all([startInstance(), startInstance()]);
  }, 120_000);

  afterAll(() => {
    for (const child of instances) child.kill("SIGTERM");
  });

  it("makes one correct upload from pieces taken by both instances", async () => {
    const { id, token } = await createTestAccount();
    const csv = makeCsv(150_000, 4); // ~9 MB: three pieces of 4 MiB
    const proxy = await startBodyLimitProxy({ target: urls[0], targets: urls });
    try {
      const result = await tusUpload(proxy.url, token, csv);
      // POST, PATCH, PATCH, PATCH alternate: both instances stored pieces.
      expect(result.offsets).toEqual([4 * 1024 * 1024, 8 * 1024 * 1024, csv.length]);
      expect([...proxy.forwarded.values()].every((bytes) => bytes >= 4 * 1024 * 1024)).toBe(true);
      expect(proxy.forwarded.size).toBe(2);
      const db = await getDb();
      const [upload] = await db.select().from(uploads).where(eq(uploads.id, result.uploadId!));
      expect(upload).toMatchObject({ accountId: id, rowCount: 150_000, sizeBytes: csv.length });
      const [tus] = await db.select().from(tusUploads).where(eq(tusUploads.uploadId, result.uploadId!));
      expect(tus).toMatchObject({ state: "done", offset: csv.length, lockToken: null });
    } finally {
      await proxy.close();
    }
  });
});
