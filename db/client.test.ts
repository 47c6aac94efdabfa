import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { seedEmbeddedDatabase } from "@/test/support/db";
import { acquireDirectoryLock, assertDriverPatched } from "./client";

function openInSecondProcess(dataDir: string) {
  return spawnSync(
    path.resolve("node_modules/.bin/tsx"),
    ["--conditions=react-server", "--tsconfig", "tsconfig.json", "test/support/open-embedded.ts", dataDir],
    { encoding: "utf8", env: { ...process.env, AUTH_SECRET: "x".repeat(40) }, timeout: 60_000 },
  );
}

describe("embedded database lock", () => {
  it("refuses a second process on the same data directory with a clear message", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "flowmail-lock-"));
    const release = acquireDirectoryLock(path.join(dataDir, "pglite"));
    // A directory that already holds a database (this process's, under its lock): the second process only has to
    // open it, not run initdb and every migration, which takes long on a busy machine.
    await seedEmbeddedDatabase(path.join(dataDir, "pglite"));
    const refused = openInSecondProcess(dataDir);
    expect(refused.status).toBe(3);
    expect(refused.stdout).toContain(`already in use by another Flowmail process (pid ${process.pid})`);
    release();
    const opened = openInSecondProcess(dataDir);
    expect(opened.stdout.trim()).toBe("opened");
    expect(opened.status).toBe(0);
  });

  it("takes over a lock left by a process that is gone", () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "flowmail-lock-"));
    writeFileSync(path.join(root, "pglite.lock"), "999999999");
    const release = acquireDirectoryLock(path.join(root, "pglite"));
    expect(() => release()).not.toThrow();
  });
});

describe("postgres.js driver patch (patches/postgres+3.4.9.patch)", () => {
  it("accepts the installed driver: patch-package applied the patch at install", async () => {
    const { default: postgres } = await import("postgres");
    expect(() => assertDriverPatched(postgres)).not.toThrow();
  });

  it("refuses a driver without the patch's mark, saying how to fix it", () => {
    const unpatched = function Postgres() {};
    expect(() => assertDriverPatched(unpatched)).toThrow(/not patched.*--ignore-scripts.*npx patch-package/s);
  });
});
