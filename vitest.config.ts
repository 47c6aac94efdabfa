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
    setupFiles: ["test/support/setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Each test file gets its own database (PGlite in memory, or a fresh PostgreSQL database).
    isolate: true,
    // next-auth's ESM build imports "next/server" without an extension, which Node's resolver refuses
    // (next has no exports map): let Vite resolve it instead.
    server: { deps: { inline: ["next-auth"] } },
  },
});
