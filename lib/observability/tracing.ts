/*
 * OpenTelemetry traces, exported over OTLP/HTTP (JSON) when OTEL_EXPORTER_OTLP_ENDPOINT is set. Started once per
 * process: by Next.js's instrumentation hook in a web process, by the worker's entry in a worker process. Unset, no
 * provider is registered and `withSpan` calls its function directly: tracing off costs a boolean test.
 *
 * Spans: `run` (claim to finalize), `node` (each node of a run), `send.batch` (each email provider call), `ai.call`
 * (each model call), `webhook.deliver`. A run's `run` span is a child of the `traceparent` its enqueue request or hook
 * delivery carried (kept with the run), so one trace holds the caller and the run's execution wherever it runs.
 *
 * The provider is Flowmail's own, not registered as OpenTelemetry's global one: Next.js traces a request only when a
 * global provider is (or a recording span is active), and its request spans — the server span, and the work around
 * the spans it opens inside a request even when those are not recorded — cost a request about as much CPU as the
 * run's own spans (bench/README.md, tiny-runs --otlp). A request's route, status and duration are in the metrics.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type ContextManager,
  type Span,
  type Tracer,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { formatTraceparent } from "./trace-context";

/** The active context follows async calls through AsyncLocalStorage (what a Node context manager does). */
class AsyncLocalStorageContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.storage.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== "function") return target;
    const run = (...args: unknown[]) => this.with(ctx, () => (target as (...a: unknown[]) => unknown)(...args));
    return run as T;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}

type TracingState = { provider: BasicTracerProvider; service: string; tracer: Tracer };
const slot = globalThis as unknown as { __flowmailTracing?: TracingState };

/** Tracing is on in this process (a provider was registered by startTracing). */
export function tracingEnabled(): boolean {
  return slot.__flowmailTracing !== undefined;
}

/**
 * Registers the process's tracer provider when `endpoint` is set (OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base
 * address; spans go to `<endpoint>/v1/traces` as OTLP/HTTP JSON, or to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT when set).
 * Returns whether tracing is on. Calling it again does nothing.
 */
export function startTracing(endpoint: string | undefined, service: string): boolean {
  if (slot.__flowmailTracing) return true;
  if (!endpoint) return false;
  const url = process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || `${endpoint.replace(/\/+$/, "")}/v1/traces`;
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": process.env.OTEL_SERVICE_NAME || service }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }), { scheduledDelayMillis: 1_000 })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  slot.__flowmailTracing = { provider, service, tracer: provider.getTracer("flowmail") };
  return true;
}

/** Sends the spans still buffered (before the process exits). */
export async function flushTracing(): Promise<void> {
  await slot.__flowmailTracing?.provider.forceFlush().catch(() => {});
}

export async function stopTracing(): Promise<void> {
  const state = slot.__flowmailTracing;
  slot.__flowmailTracing = undefined;
  await state?.provider.shutdown().catch(() => {});
  trace.disable();
  context.disable();
  propagation.disable();
}

/**
 * Runs `fn` inside a span named `name` (a child of `parent`, else of the active span); the span ends when `fn` settles,
 * with an error status when it throws. With tracing off, `fn` runs as is and receives undefined.
 */
export async function withSpan<T>(name: string, attributes: Attributes, fn: (span: Span | undefined) => Promise<T>, parent?: Context): Promise<T> {
  const tracing = slot.__flowmailTracing;
  if (!tracing) return fn(undefined);
  return tracing.tracer.startActiveSpan(name, { attributes }, parent ?? context.active(), async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message.slice(0, 200) : undefined });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Attributes on the active span (the enclosing `node` span when a node finishes); nothing with tracing off. */
export function annotateActiveSpan(attributes: Attributes): void {
  if (!slot.__flowmailTracing) return;
  trace.getActiveSpan()?.setAttributes(attributes);
}

/** The `traceparent` of the active span, for an outbound request (webhooks); undefined when none is recording. */
export function activeTraceparent(): string | undefined {
  const span = slot.__flowmailTracing ? trace.getActiveSpan() : undefined;
  return span?.isRecording() ? formatTraceparent(span.spanContext()) : undefined;
}
