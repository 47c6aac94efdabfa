// Shared setup of the run benchmarks: a database (PGlite in a temp dir, or DATABASE_URL), an account, an upload.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { closeDb, getDb, getDbHandle, openPostgres } from "@/db/client";
import { migratePostgres } from "@/db/migrate";
import { accounts, uploadChunks, uploads, workflows } from "@/db/schema";
import { resetConfig } from "@/lib/config";
import { newId } from "@/lib/ids";

export function benchEnv(extra: Record<string, string> = {}): void {
  process.env.DATA_DIR ??= mkdtempSync(path.join(os.tmpdir(), "flowmail-bench-"));
  process.env.AUTH_SECRET ??= "bench-secret-bench-secret-bench-secret-0123";
  process.env.LOG_LEVEL ??= "error";
  Object.assign(process.env, extra);
  resetConfig();
}

/**
 * PGlite in a fresh temp dir, or a fresh database on the PostgreSQL server of DATABASE_URL (dropped at the end):
 * leftovers of other runs (queued runs the executor would pick up) never mix into a measurement.
 */
export async function benchDb() {
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl) {
    const name = `flowmail_bench_${randomBytes(5).toString("hex")}`;
    const admin = await openPostgres(serverUrl, { max: 1 });
    await admin.db.execute(sql.raw(`create database ${name}`));
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    process.env.DATABASE_URL = url.toString();
    resetConfig();
    dropAtExit = async () => {
      await closeDb();
      await admin.db.execute(sql.raw(`drop database if exists ${name} with (force)`));
      await admin.close();
    };
  }
  const handle = await getDbHandle();
  if (handle.driver === "postgres") await migratePostgres(handle.db);
  return { db: handle.db, driver: handle.driver };
}

let dropAtExit: (() => Promise<void>) | undefined;

/** Ends the benchmark: drops its PostgreSQL database, then exits with `code`. */
export async function benchExit(code: number): Promise<never> {
  await dropAtExit?.().catch((error) => console.error("could not drop the bench database", error));
  process.exit(code);
}

export async function benchAccount(): Promise<string> {
  const db = await getDb();
  const id = newId("usr");
  await db.insert(accounts).values({ id, email: `bench-${id.slice(-8).toLowerCase()}@example.com`, fullName: "Bench", passwordHash: "x", emailVerifiedAt: new Date() });
  return id;
}

/** The AI provider settings of a bench account; `key` is stored encrypted, as the settings page stores it. */
export type BenchAi = {
  provider: string;
  model: string;
  baseUrl: string;
  key: string;
  requestsPerMinute?: number;
  tokensPerMinute?: number;
  maxConcurrency?: number;
};

/** An account (benchAccount's) whose AI provider is `ai`: what the AI benchmarks run their workflows as. */
export async function benchAiAccount(ai: BenchAi): Promise<string> {
  // Imported when called: it is server-only, and the benchmarks without AI do not load it.
  const { encryptSecret } = await import("@/lib/crypto");
  const id = await benchAccount();
  await (await getDb())
    .update(accounts)
    .set({
      aiProvider: ai.provider,
      aiModel: ai.model,
      aiBaseUrl: ai.baseUrl,
      aiKeyEncrypted: encryptSecret(ai.key),
      aiKeyLast4: ai.key.slice(-4),
      aiRequestsPerMinute: ai.requestsPerMinute,
      aiTokensPerMinute: ai.tokensPerMinute,
      aiMaxConcurrency: ai.maxConcurrency,
    })
    .where(eq(accounts.id, id));
  return id;
}

export async function benchUpload(accountId: string, columns: string[], rowCount: number, row: (i: number) => string[]): Promise<string> {
  const db = await getDb();
  const id = newId("upl");
  await db.insert(uploads).values({ id, accountId, filename: "bench.csv", rowCount, columns, sizeBytes: rowCount * 40 });
  const chunkSize = 2000;
  for (let c = 0; c * chunkSize < rowCount; c++) {
    const rows: string[][] = [];
    for (let i = c * chunkSize; i < Math.min(rowCount, (c + 1) * chunkSize); i++) rows.push(row(i));
    await db.insert(uploadChunks).values({ uploadId: id, chunkIndex: c, firstRow: c * chunkSize, rowCount: rows.length, rows });
  }
  return id;
}

export async function benchWorkflow(accountId: string, graph: unknown): Promise<string> {
  const db = await getDb();
  const id = newId("wf");
  await db.insert(workflows).values({ id, accountId, name: "bench", graph, version: 1 });
  return id;
}

export const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);

/** Samples RSS every 20 ms until stopped; returns the peak. */
export function rssSampler() {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, process.memoryUsage().rss);
    },
  };
}

/**
 * The upload benchmarks' CSV (`rows` rows × 8 columns, a quoted cell with commas and quotes every 10th row), written
 * in a child process so that the garbage of generating it does not inflate the caller's RSS baseline.
 */
export function writeBenchCsv(file: string, rows: number): void {
  const result = spawnSync(process.execPath, ["-e", CSV_GENERATOR, file, String(rows)], { stdio: "inherit" });
  if (result.status !== 0) throw new Error("generating the CSV failed");
}

/** Plain JavaScript passed to `node -e` (argv: file, rows). */
const CSV_GENERATOR = `
const fs = require("node:fs");
const [file, rows] = [process.argv[1], Number(process.argv[2])];
const fd = fs.openSync(file, "w");
const cities = ["Berlin", "Lisbon", "Kraków", "Osaka", "Toronto", "Nairobi", "Lima", "Oslo"];
let buffer = "id,email,first_name,last_name,city,rating,signup_date,note\\n";
for (let i = 0; i < rows; i++) {
  const note = i % 10 === 0 ? '"likes ""quotes"", commas"' : "customer since " + (2000 + (i % 25)) + " with plan tier " + (i % 7);
  const month = String((i % 12) + 1).padStart(2, "0");
  const day = String((i % 28) + 1).padStart(2, "0");
  buffer += i + ",user" + i + "@example.com,First" + (i % 977) + ",Last" + (i % 1327) + "," + cities[i % 8] + "," + (i % 5) + ",2024-" + month + "-" + day + "," + note + "\\n";
  if (buffer.length > 1 << 20) { fs.writeSync(fd, buffer); buffer = ""; }
}
fs.writeSync(fd, buffer);
fs.closeSync(fd);
`;

/**
 * A profile of this process from now until the returned function is called: a CPU profile written to
 * BENCH_CPU_PROFILE (open it in Chrome's DevTools), or, with BENCH_HEAP_PROFILE instead, a sampling heap profile (a
 * .heapprofile for DevTools' Memory tab). Without either variable, nothing is recorded and the function does nothing.
 */
export async function startProfile(): Promise<() => Promise<void>> {
  const heapFile = process.env.BENCH_HEAP_PROFILE;
  if (heapFile) {
    // Allocations by call site, collected objects included (what the scavenger pays for), every 4 KiB on average.
    const session = new Session();
    session.connect();
    await session.post("HeapProfiler.enable");
    await session.post("HeapProfiler.startSampling", { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never);
    return async () => {
      const { profile } = await session.post("HeapProfiler.stopSampling");
      writeFileSync(heapFile, JSON.stringify(profile));
      session.disconnect();
    };
  }
  const file = process.env.BENCH_CPU_PROFILE;
  if (!file) return async () => {};
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  return async () => {
    const { profile } = await session.post("Profiler.stop");
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  };
}
