import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "@playwright/test";

// PW_BASE_URL points the specs at a server you already run (e.g. `next dev -p 3200`); otherwise Playwright
// starts the production build (`next build` first) on port 3300 with a fresh data directory.
const externalBaseUrl = process.env.PW_BASE_URL;
const port = Number(process.env.PW_PORT ?? 3300);
// PW_HOST=127.0.0.1 runs the whole suite at the loopback address while APP_URL stays http://localhost:PORT, as for
// someone who types 127.0.0.1 (cookies and the same-origin check must hold there too); e2e/loopback.spec.ts checks
// both addresses in every run.
const host = process.env.PW_HOST ?? "localhost";

export default defineConfig({
  testDir: "./e2e",
  outputDir: "./test-results",
  fullyParallel: false,
  // The machine is small and the embedded database is one process: one browser at a time.
  workers: 1,
  forbidOnly: !!process.env.CI,
  retries: process.env.CI ? 1 : 0,
  timeout: 120_000,
  expect: { timeout: 20_000 },
  reporter: process.env.CI ? [["list"], ["html", { open: "never" }]] : "list",
  use: {
    baseURL: externalBaseUrl ?? `http://${host}:${port}`,
    viewport: { width: 1440, height: 900 },
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
      ],
    },
  },
  webServer: externalBaseUrl
    ? undefined
    : {
        command: `npm start -- -p ${port}`,
        url: `http://localhost:${port}/api/health`,
        env: {
          DATA_DIR: mkdtempSync(join(tmpdir(), "flowmail-e2e-")),
          AUTH_SECRET: "e2e-secret-0123456789abcdef0123456789abcdef",
          ALLOW_PRIVATE_NETWORK_TARGETS: "true",
          // The specs read sign-up codes from the local mailbox; a production server serves it only when asked to.
          MAILBOX_ENABLED: "true",
          // Paces OUTPUT into the local mailbox (2 batches of 100 per second) so e2e/sending.spec.ts can watch progress.
          MAILBOX_RATE_PER_SECOND: "2",
          APP_URL: `http://localhost:${port}`,
          // Every spec signs up from 127.0.0.1: lift the per-client sign-up limit for the suite.
          REGISTRATION_ADDRESS_LIMIT: "10000",
        },
        reuseExistingServer: false,
        timeout: 120_000,
      },
});
