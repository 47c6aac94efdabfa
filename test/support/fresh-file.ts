import { vi } from "vitest";

/**
 * Called first by test/support/setup.ts. A worker process runs many test files one after another (`isolate: false`:
 * packages stay loaded and PGlite's WASM and the JIT stay warm: a file no longer pays for a process and every import of
 * its own), yet each file starts as if it were alone:
 * - every module of ours is evaluated afresh for it (config caches, policies a test changed, module-level maps), as
 *   `isolate: true` would; packages under node_modules stay loaded;
 * - process.env is back to what the worker started with (a test that set a variable and did not unset it leaks
 *   nothing into the next file);
 * - what the last file left on globalThis under `__flowmail…` (the process-wide executor, webhook delivery loop,
 *   executor lock, Inngest client, tus locker: kept there in production so that dev-server reloads never start two) is
 *   stopped after that file's own hooks, and gone before the next file starts.
 * vi.mock stays per file on its own (Vitest keeps a mock registry per test file).
 */
type Globals = Record<string, unknown> & { __flowmailTestWorker?: { env: NodeJS.ProcessEnv } };
const globals = globalThis as Globals;

/** Process-wide, not per file: the database opener and slot (test/support/setup.ts), the client-address stamp. */
const KEPT = new Set(["__flowmailDb", "__flowmailDbOpener", "__flowmailClientAddressToken", "__flowmailClientAddressHook", "__flowmailTestWorker"]);

/** Before the file's own modules load: fresh modules, the worker's environment, nothing left on globalThis. */
export async function startFileFresh(): Promise<void> {
  const worker = (globals.__flowmailTestWorker ??= { env: { ...process.env } });
  vi.resetModules();
  restoreEnv(worker.env);
  await endProcessWideWork();
  // A database opened after the last file closed its own (something of it still running then) is not this file's.
  const leftover = globals.__flowmailDb as Promise<{ close: () => Promise<void> }> | undefined;
  delete globals.__flowmailDb;
  if (leftover) await leftover.then((handle) => handle.close()).catch(() => {});
}

function restoreEnv(saved: NodeJS.ProcessEnv): void {
  for (const key of Object.keys(process.env)) {
    // Vitest sets its own per file (the worker's and pool's ids).
    if (!(key in saved) && !key.startsWith("VITEST")) delete process.env[key];
  }
  for (const [key, value] of Object.entries(saved)) {
    if (!key.startsWith("VITEST") && process.env[key] !== value) process.env[key] = value;
  }
}

/** Stops and forgets what a test file left running on globalThis (see above): after its hooks, before its database closes. */
export async function endProcessWideWork(): Promise<void> {
  for (const key of Object.keys(globals).filter((k) => k.startsWith("__flowmail") && !KEPT.has(k))) {
    const value = globals[key] as Record<string, unknown> | undefined;
    delete globals[key];
    await stopQuietly(value);
  }
}

async function stopQuietly(value: Record<string, unknown> | undefined): Promise<void> {
  if (!value || typeof value !== "object") return;
  const call = (name: string, ...args: unknown[]) => (typeof value[name] === "function" ? (value[name] as (...a: unknown[]) => unknown).call(value, ...args) : undefined);
  try {
    // The embedded executor and the like.
    if (typeof value.stop === "function") await call("stop");
    // The webhook delivery loop's state: its timer, the claim and the deliveries in flight.
    if ("timer" in value && "inFlight" in value) {
      value.stopped = true;
      clearInterval(value.timer as NodeJS.Timeout);
      await value.claiming;
      await Promise.all((value.inFlight as Map<string, Promise<unknown>>).values());
    }
    // The executor lock's dedicated PostgreSQL session.
    const session = value.sql as { end?: (o: { timeout: number }) => Promise<void> } | undefined;
    if (typeof session?.end === "function") await session.end({ timeout: 1 });
    if (typeof value.unlock === "function") await call("unlock");
    if (typeof value.removeAllListeners === "function") call("removeAllListeners");
  } catch {
    // Best effort: what is left is forgotten either way.
  }
}
