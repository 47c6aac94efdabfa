/**
 * Upload benchmark: a ~50 MiB CSV (500k rows × 8 columns) through the real POST /api/uploads handler, streamed
 * as a multipart body, into PGlite (default) or the PostgreSQL server of DATABASE_URL.
 *
 *   npx tsx --conditions=react-server --tsconfig tsconfig.json bench/upload.ts [rows]
 *
 * Prints one line: `upload 50MiB rows=… time=…s rssGrowth=…MB driver=… cpu=…s load=…`. Target: ≤ 5 s, RSS growth
 * ≤ 300 MB. `cpu` is this process's CPU time (all of the work on PGlite) and `load` the 1-minute load average: on a
 * shared machine the wall time depends on what else runs. RSS growth is measured from after the database is open
 * (PGlite alone takes ~760 MB of RSS when it starts).
 */
import { createReadStream, mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";

const ROWS = Number(process.argv[2] ?? 500_000);
const BOUNDARY = "----flowmailbench7b1c";

function multipartStream(file: string): ReadableStream<Uint8Array> {
  const head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="bench.csv"\r\nContent-Type: text/csv\r\n\r\n`;
  const tail = `\r\n--${BOUNDARY}--\r\n`;
  async function* parts() {
    yield Buffer.from(head);
    for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024 })) yield chunk as Buffer;
    yield Buffer.from(tail);
  }
  return Readable.toWeb(Readable.from(parts())) as ReadableStream<Uint8Array>;
}

async function openDatabase(): Promise<string> {
  const client = await import("@/db/client");
  if (process.env.DATABASE_URL) {
    const handle = await client.openPostgres(process.env.DATABASE_URL);
    const { migratePostgres } = await import("@/db/migrate");
    await migratePostgres(handle.db);
    client.setDbHandle(handle);
  } else {
    client.setDbHandle(await client.openPglite(undefined));
  }
  return (await client.getDbHandle()).driver;
}

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "flowmail-bench-"));
  process.env.DATA_DIR = dir;
  process.env.AUTH_SECRET ??= "bench-secret-bench-secret-bench-secret-0123";
  const file = path.join(dir, "bench.csv");
  const { writeBenchCsv } = await import("./bench-support");
  writeBenchCsv(file, ROWS);
  const size = statSync(file).size;

  const driver = await openDatabase();
  const { getDb, closeDb } = await import("@/db/client");
  const { accounts } = await import("@/db/schema");
  const { newId } = await import("@/lib/ids");
  const { signAccessToken } = await import("@/lib/auth/tokens");
  const { POST } = await import("@/app/api/uploads/route");
  const accountId = newId("usr");
  await (await getDb()).insert(accounts).values({
    id: accountId,
    email: `bench-${accountId.slice(-6)}@example.com`,
    fullName: "Bench",
    passwordHash: "x",
    emailVerifiedAt: new Date(),
  });
  const token = await signAccessToken(accountId);

  global.gc?.();
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const req = new Request("http://localhost/api/uploads", {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
    body: multipartStream(file),
    // @ts-expect-error Node's fetch needs duplex for streamed bodies
    duplex: "half",
  });
  const res = await POST(req, { params: Promise.resolve({}) });
  const body = (await res.json()) as { rowCount?: number; code?: string; detail?: string };
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  if (res.status !== 201) throw new Error(`upload answered ${res.status}: ${JSON.stringify(body)}`);
  const mib = Math.round(size / 1024 / 1024);
  if (process.env.BENCH_VERBOSE) console.error({ baseline, peak, end: process.memoryUsage() });
  console.log(
    `upload ${mib}MiB rows=${body.rowCount} time=${seconds.toFixed(2)}s rssGrowth=${Math.round((peak - baseline) / 1e6)}MB driver=${driver} cpu=${((cpu.user + cpu.system) / 1e6).toFixed(2)}s load=${os.loadavg()[0].toFixed(1)}`,
  );
  await closeDb();
  rmSync(dir, { recursive: true, force: true });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
