import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { execRows, migrationsFolder, openPglite, openPostgres, type DbHandle } from "@/db/client";
import { migratePostgres } from "@/db/migrate";

/**
 * A fresh database for the current test file, from one migrated copy instead of migrating per file: PGlite loads a
 * dumped data directory (cached under node_modules/.cache, keyed by the migrations), PostgreSQL (TEST_DATABASE_URL)
 * clones a migrated template database (`CREATE DATABASE … TEMPLATE`, kept on the server, keyed the same way). A
 * change to any file under db/migrations makes a new copy, so it is never stale. Called by the opener that
 * test/support/setup.ts installs, the first time the file asks for its database.
 */
export async function openTestDatabase(): Promise<DbHandle> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) return openPglite(undefined, { snapshot: await pgliteSnapshot() });
  admin ??= await openPostgres(serverUrl, { max: 1 });
  const template = await postgresTemplate(admin, serverUrl);
  const name = `flowmail_test_${randomBytes(6).toString("hex")}`;
  await admin.db.execute(sql.raw(`create database ${name} template ${template}`));
  created.push(name);
  const url = databaseUrl(serverUrl, name);
  process.env.TEST_DATABASE_CURRENT_URL = url;
  return openPostgres(url, { max: 20 });
}

/** The migrated copy (PGlite snapshot or PostgreSQL template), built if missing: test/support/global-setup.ts. */
export async function prepareTestDatabaseCopy(): Promise<void> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) {
    await pgliteSnapshotFile();
    return;
  }
  const handle = await openPostgres(serverUrl, { max: 1 });
  try {
    await postgresTemplate(handle, serverUrl);
  } finally {
    await handle.close();
  }
}

/** After the file: its PostgreSQL databases are dropped (PGlite's lived in memory). */
export async function dropTestDatabases(): Promise<void> {
  for (const name of created.splice(0)) await admin!.db.execute(sql.raw(`drop database if exists ${name} with (force)`));
  await admin?.close();
  admin = undefined;
}

let admin: DbHandle | undefined;
const created: string[] = [];

function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Every file under db/migrations, and the PGlite version (its data directory format), in one short hash. */
function migrationsFingerprint(): string {
  const hash = createHash("sha256");
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir).sort()) {
      const file = path.join(dir, entry);
      if (statSync(file).isDirectory()) walk(file);
      else hash.update(`${path.relative(migrationsFolder, file)}\0`).update(readFileSync(file)).update("\0");
    }
  };
  walk(migrationsFolder);
  hash.update(readFileSync(path.join(process.cwd(), "node_modules/@electric-sql/pglite/package.json")));
  return hash.digest("hex").slice(0, 16);
}

/**
 * A migrated PGlite data directory (a tar of ~11 MB). test/support/global-setup.ts builds it once per run if the
 * migrations changed; a file run without that setup builds it itself (two at once each write their own temporary file
 * and rename it, so readers never see half). Snapshots of older migrations are deleted.
 *
 * Every test file loads it, so it is kept small: no template databases (nothing here creates a database; PGlite only
 * ever opens `postgres`), 1 MB WAL segments instead of 16 MB, and only the WAL segment the last checkpoint is in (the
 * others are empty segments kept for reuse). PGlite is handed the bytes as they are rather than through a Blob, which
 * Node copies twice and reads back in small chunks.
 */
async function pgliteSnapshot(): Promise<Blob> {
  const bytes = readFileSync(await pgliteSnapshotFile());
  const tar = { type: "application/x-tar", arrayBuffer: async () => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) };
  return tar as unknown as Blob;
}

async function pgliteSnapshotFile(): Promise<string> {
  const dir = path.join(process.cwd(), "node_modules/.cache/flowmail-test");
  const file = path.join(dir, `pglite-${migrationsFingerprint()}-wal1.tar`);
  if (!existsSync(file)) {
    const { PGlite } = await import("@electric-sql/pglite");
    const { drizzle } = await import("drizzle-orm/pglite");
    const { migrate } = await import("drizzle-orm/pglite/migrator");
    const client = new PGlite({ initDbStartParams: ["--wal-segsize=1"] });
    try {
      await client.waitReady;
      await migrate(drizzle(client), { migrationsFolder });
      for (const db of ["template0", "template1"]) {
        await client.query(`alter database ${db} is_template false`);
        await client.query(`drop database ${db}`);
      }
      await client.query("checkpoint");
      const dump = withoutSpareWalSegments(Buffer.from(await (await client.dumpDataDir("none")).arrayBuffer()));
      mkdirSync(dir, { recursive: true });
      const temporary = `${file}.${process.pid}.tmp`;
      writeFileSync(temporary, dump);
      renameSync(temporary, file);
      for (const old of readdirSync(dir)) if (/^pglite-[\w-]+\.tar$/.test(old) && path.join(dir, old) !== file) rmSync(path.join(dir, old), { force: true });
    } finally {
      await client.close();
    }
  }
  return file;
}

type TarEntry = { name: string; size: number; directory: boolean; at: number; end: number };

/** The entries of PGlite's own ustar dump: 512-byte headers (name, octal size, type '5' for a directory), each file padded to 512 bytes. */
function tarEntries(tar: Buffer): TarEntry[] {
  const field = (at: number, length: number) => tar.toString("latin1", at, at + length).replace(/\0.*$/s, "");
  const entries: TarEntry[] = [];
  for (let at = 0; at + 512 <= tar.length && tar[at] !== 0; ) {
    const size = parseInt(field(at + 124, 12).trim() || "0", 8);
    const end = at + 512 + Math.ceil(size / 512) * 512;
    entries.push({ name: path.join(field(at + 345, 155), field(at, 100)), size, directory: field(at + 156, 1) === "5", at, end });
    at = end;
  }
  return entries;
}

/**
 * After a checkpoint, the WAL segment with the lowest number holds the checkpoint (older ones are removed); the
 * higher ones are recycled empty segments, which PostgreSQL creates again when it needs them.
 */
function withoutSpareWalSegments(tar: Buffer): Buffer {
  const entries = tarEntries(tar);
  const segments = entries.filter((e) => /^\/?pg_wal\/[0-9A-F]{24}$/.test(e.name)).map((e) => e.name).sort();
  const spare = new Set(segments.slice(1));
  return Buffer.concat([...entries.filter((e) => !spare.has(e.name)).map((e) => tar.subarray(e.at, e.end)), Buffer.alloc(1024)]);
}

/**
 * The migrated template database on the PostgreSQL server. Built under a temporary name and renamed when complete
 * (the rename is atomic: a concurrent builder that loses the race drops its copy). Connections to it are refused
 * (ALLOW_CONNECTIONS false) because CREATE DATABASE … TEMPLATE fails while anyone is connected to the template.
 */
async function postgresTemplate(admin: DbHandle, serverUrl: string): Promise<string> {
  const name = `flowmail_template_${migrationsFingerprint()}`;
  const exists = async (db: string) => (await execRows(admin.db, sql`select 1 from pg_database where datname = ${db}`)).length > 0;
  if (await exists(name)) return name;
  const building = `${name}_${randomBytes(4).toString("hex")}`;
  await admin.db.execute(sql.raw(`create database ${building}`));
  const handle = await openPostgres(databaseUrl(serverUrl, building), { max: 1 });
  try {
    await migratePostgres(handle.db);
  } finally {
    await handle.close();
  }
  await admin.db.execute(sql.raw(`alter database ${building} with allow_connections false`));
  try {
    await admin.db.execute(sql.raw(`alter database ${building} rename to ${name}`));
  } catch (error) {
    await admin.db.execute(sql.raw(`drop database if exists ${building}`));
    if (!(await exists(name))) throw error;
  }
  return name;
}

/**
 * Writes the migrated snapshot into a PGlite data directory on disk, as if a server had created it earlier (a
 * restarted server's path, without initdb and the migrations).
 */
export async function seedEmbeddedDatabase(dir: string): Promise<void> {
  const tar = readFileSync(await pgliteSnapshotFile());
  for (const entry of tarEntries(tar)) {
    const name = path.join(dir, entry.name);
    if (entry.directory) mkdirSync(name, { recursive: true });
    else {
      mkdirSync(path.dirname(name), { recursive: true });
      writeFileSync(name, tar.subarray(entry.at + 512, entry.at + 512 + entry.size), { mode: 0o600 });
    }
  }
}
