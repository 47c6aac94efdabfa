import os from "node:os";
import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    alias: {
      "@": path.resolve(__dirname),
      "server-only": path.resolve(__dirname, "test/support/empty.ts"),
    },
  },
  test: {
    environment: "node",
    include: ["**/*.test.ts"],
    exclude: ["node_modules/**", ".next*/**", "e2e/**", "bench/**", ".data/**", "test/faults/**"],
    globalSetup: ["test/support/global-setup.ts"],
    setupFiles: ["test/support/setup.ts"],
    // A file's database is created when it first asks for one, inside whichever hook or test that is (PGlite from
    // a migrated snapshot: test/support/db.ts): tests get the hooks' time limit so that this never flakes on a busy
    // machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Vitest's default in `run` mode is one worker fewer than the cores: a single worker on a 2-core machine, which
    // left a core idle while files waited on PGlite, HTTP round trips and retry waits (85 s vs ~55 s for `npm test`).
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    // A worker process runs test files one after another, each as if alone (test/support/fresh-file.ts: fresh modules
    // of ours, the worker's environment, nothing left running on globalThis) and with its own database if it uses one
    // (PGlite in memory, or a fresh PostgreSQL database cloned from a migrated template). A process per file (`isolate:
    // true`) paid for a process, every package's import and a cold PGlite in each file: most of the suite's CPU.
    isolate: false,
    // next-auth's ESM build imports "next/server" without an extension, which Node's resolver refuses
    // (next has no exports map): let Vite resolve it instead.
    server: { deps: { inline: ["next-auth"] } },
  },
});
