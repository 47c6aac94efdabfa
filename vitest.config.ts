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
    exclude: ["node_modules/**", ".next/**", "e2e/**", "bench/**", ".data/**", "test/faults/**"],
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
    // Each test file gets its own process, and its own database if it uses one (PGlite in memory, or a fresh
    // PostgreSQL database cloned from a migrated template); files that never touch the database get none.
    isolate: true,
    // next-auth's ESM build imports "next/server" without an extension, which Node's resolver refuses
    // (next has no exports map): let Vite resolve it instead.
    server: { deps: { inline: ["next-auth"] } },
  },
});
