/**
 * Next.js calls register() once per server process. In the Node runtime it starts the background work of this
 * process; other engineers' loops (webhook delivery) add one line each in startBackgroundWork.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  // `next build` loads this file too; no executor (and no database lock) during a build.
  if (process.env.NEXT_PHASE === "phase-production-build") return;
  const { startBackgroundWork } = await import("./lib/engine/background");
  await startBackgroundWork();
  (await import("./lib/webhooks/delivery-loop")).startWebhookDeliveryLoop();
}
