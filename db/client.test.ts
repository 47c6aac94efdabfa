import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { acquireDirectoryLock } from "./client";

function openInSecondProcess(dataDir: string) {
  return spawnSync(
    path.resolve("node_modules/.bin/tsx"),
    ["--conditions=react-server", "--tsconfig", "tsconfig.json", "test/support/open-embedded.ts", dataDir],
    { encoding: "utf8", env: { ...process.env, AUTH_SECRET: "x".repeat(40) }, timeout: 60_000 },
  );
}

describe("embedded database lock", () => {
  it("refuses a second process on the same data directory with a clear message", () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "flowmail-lock-"));
    const release = acquireDirectoryLock(path.join(dataDir, "pglite"));
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
