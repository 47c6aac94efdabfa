import { defineConfig } from "vitest/config";
import base from "./vitest.config";

// `npm run test:faults`: the slow fault-injection tests of test/faults (kept out of the default `npm test`),
// one file at a time so a killed process or a dropped connection never disturbs another file.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ["test/faults/**/*.test.ts"],
    exclude: ["node_modules/**"],
    // Generous: these tests wait on kills, restarts and provider timers, and share the machine with the build in CI.
    testTimeout: 480_000,
    fileParallelism: false,
    // Each fault file in a process of its own: they kill processes and break connections.
    isolate: true,
  },
});
