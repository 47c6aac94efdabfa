/**
 * Next.js calls register() once per server process. In the Node runtime it starts the background work of this
 * process (instrumentation-node.ts: configuration check, client-address capture, executor, shutdown hand-back,
 * webhook delivery). The Node-only code lives in its own file, imported only in the Node runtime, as Next's docs
 * advise: Next also compiles this file for the Edge runtime, and `process.exit` here made `next dev` print an error.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  // `next build` loads this file too; no executor (and no database lock) during a build.
  if (process.env.NEXT_PHASE === "phase-production-build") return;
  await (await import("./instrumentation-node")).registerNode();
}
