/**
 * The Node runtime's start-up (instrumentation.ts imports it only when NEXT_RUNTIME is "nodejs", so the Edge
 * compilation of instrumentation.ts never sees the Node-only APIs used here, such as process.exit).
 */
export async function registerNode(): Promise<void> {
  // A production server without an email transport refuses to start (CONTRACT 15): the config says which variable.
  const { ConfigError, getConfig } = await import("./lib/config");
  const { log, logFatal } = await import("./lib/log");
  const refuse = (error: unknown) => {
    if (!(error instanceof ConfigError)) throw error;
    logFatal(`Flowmail cannot start: ${error.message}`);
    process.exit(1);
  };
  let config;
  try {
    config = getConfig();
  } catch (error) {
    return refuse(error);
  }
  if (config.nodeEnv === "production" && !config.appUrlConfigured) {
    log.warn(`APP_URL is not set, so links in emails and hook URLs say ${config.appUrl}: set APP_URL to the address people reach this server at.`);
  }
  // OTEL_EXPORTER_OTLP_ENDPOINT set: this process's spans (Next's request spans and the runs' own) are exported.
  (await import("./lib/observability/tracing")).startTracing(config.otelExporterEndpoint, "flowmail-web");
  // Per-client throttles need the socket address, which route handlers cannot see (lib/auth/client-address.ts).
  (await import("./lib/auth/client-address")).installClientAddressCapture();
  const { installShutdownHandBack, startBackgroundWork } = await import("./lib/services/background/start-background-work");
  await startBackgroundWork().catch(refuse);
  // SIGTERM/SIGINT hand running runs back at their next step boundary, so the next process resumes them at once.
  installShutdownHandBack();
  // EXECUTOR=off: the worker processes deliver the webhooks of the runs they finish.
  if (config.executorEnabled || config.inngest.enabled) (await import("./lib/webhooks/delivery-loop")).startWebhookDeliveryLoop();
  // TRACE_EVENT_LOOP_MS=N (a diagnostic for bench/freeze.ts): each time the event loop was held N ms or more, stderr says when.
  const traceMs = Number(process.env.TRACE_EVENT_LOOP_MS);
  if (traceMs > 0) {
    let last = performance.now();
    setInterval(() => {
      const now = performance.now();
      const held = now - last - 5;
      last = now;
      if (held >= traceMs) process.stderr.write(`[event loop] ${new Date().toISOString()} held ~${held.toFixed(0)}ms mono=${process.hrtime.bigint() / 1000n}\n`);
    }, 5).unref();
  }
}
