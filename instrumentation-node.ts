/**
 * The Node runtime's start-up (instrumentation.ts imports it only when NEXT_RUNTIME is "nodejs", so the Edge
 * compilation of instrumentation.ts never sees the Node-only APIs used here, such as process.exit).
 */
export async function registerNode(): Promise<void> {
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
  const { installShutdownHandBack, startBackgroundWork } = await import("./lib/services/background/start-background-work");
  await startBackgroundWork();
  // SIGTERM/SIGINT hand running runs back at their next step boundary, so the next process resumes them at once.
  installShutdownHandBack();
  (await import("./lib/webhooks/delivery-loop")).startWebhookDeliveryLoop();
}
