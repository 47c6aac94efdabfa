import { afterAll, beforeAll } from "vitest";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { resetConfig } from "@/lib/config";
import { useTestDatabase } from "./db";

// Tests never touch the developer's .data directory, and never send real email.
process.env.DATA_DIR = mkdtempSync(path.join(os.tmpdir(), "flowmail-test-"));
process.env.AUTH_SECRET ??= "test-secret-test-secret-test-secret-0123456789";
delete process.env.DATABASE_URL;
delete process.env.RESEND_API_KEY;
delete process.env.INNGEST_EVENT_KEY;
delete process.env.INNGEST_SIGNING_KEY;
delete process.env.INNGEST_DEV;
delete process.env.GOOGLE_CLIENT_ID;
delete process.env.GOOGLE_CLIENT_SECRET;
resetConfig();

let release: (() => Promise<void>) | undefined;

beforeAll(async () => {
  release = await useTestDatabase();
});

afterAll(async () => {
  await release?.();
});
