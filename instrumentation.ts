/**
 * Next.js calls register() once per server process. In the Node runtime it starts the background work of this
 * process; other engineers' loops (webhook delivery) add one line each in startBackgroundWork.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  // `next build` loads this file too; no executor (and no database lock) during a build.
  if (process.env.NEXT_PHASE === "phase-production-build") return;
  // A production server without an email transport refuses to start (CONTRACT 15): the config says which variable.
  const { ConfigError, getConfig } = await import("./lib/config");
  try {
    getConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`Flowmail cannot start: ${error.message}`);
    process.exit(1);
  }
  // Per-client throttles need the socket address, which route handlers cannot see (lib/auth/client-address.ts).
  (await import("./lib/auth/client-address")).installClientAddressCapture();
  const { installShutdownHandBack, startBackgroundWork } = await import("./lib/engine/background");
  await startBackgroundWork();
  // SIGTERM/SIGINT hand running runs back at their next step boundary, so the next process resumes them at once.
  installShutdownHandBack();
  (await import("./lib/webhooks/delivery-loop")).startWebhookDeliveryLoop();
}
