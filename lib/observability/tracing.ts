/*
 * OpenTelemetry traces, exported over OTLP/HTTP (JSON) when OTEL_EXPORTER_OTLP_ENDPOINT is set. Started once per
 * process: by Next.js's instrumentation hook in a web process, by the worker's entry in a worker process. Unset, no
 * provider is registered and `withSpan` calls its function directly: tracing off costs a boolean test.
 *
 * Spans: `run` (claim to finalize), `node` (each node of a run), `send.batch` (each email provider call), `ai.call`
 * (each model call). A run's `run` span is a child of the `traceparent` kept with the run, so one trace holds the
 * enqueuing request and the run's execution wherever it runs.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import {
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type ContextManager,
  type Span,
  SpanKind,
  type SpanOptions,
  type Tracer,
  type TracerOptions,
  type TracerProvider,
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

/**
 * What Next.js's tracer gets: its request (server) spans are real; the spans it opens inside a request (rendering,
 * route resolution, handler execution) are not made at all. Each of those is handed a non-recording stand-in that
 * carries the enclosing span's context, and the active context is left as it was, so the request's server span stays
 * the active span in the route handler: a run enqueued there keeps it as its parent. Making and then dropping those
 * spans was most of what tracing cost a request.
 */
class RequestSpansOnly implements Tracer {
  constructor(private readonly inner: Tracer) {}
  startSpan(name: string, options?: SpanOptions, ctx?: Context): Span {
    if (options?.kind === SpanKind.SERVER) return this.inner.startSpan(name, options, ctx);
    return standIn(ctx ?? context.active());
  }
  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...rest: [F] | [SpanOptions, F] | [SpanOptions, Context, F]): ReturnType<F> {
    const fn = rest[rest.length - 1] as F;
    const options = rest.length > 1 ? (rest[0] as SpanOptions) : undefined;
    const ctx = rest.length > 2 ? (rest[1] as Context) : context.active();
    if (options?.kind === SpanKind.SERVER) return this.inner.startActiveSpan(name, options, ctx, fn);
    return fn(standIn(ctx)) as ReturnType<F>;
  }
}

const standIn = (ctx: Context): Span => trace.wrapSpanContext(trace.getSpanContext(ctx) ?? INVALID_SPAN_CONTEXT);

/** The process's tracer provider: the SDK's, with Next.js's tracer narrowed to its request spans. */
class FlowmailTracerProvider implements TracerProvider {
  private readonly nextTracers = new Map<string, Tracer>();
  constructor(readonly sdk: BasicTracerProvider) {}
  getTracer(name: string, version?: string, options?: TracerOptions): Tracer {
    if (name !== "next.js") return this.sdk.getTracer(name, version, options);
    const key = version ?? "";
    let tracer = this.nextTracers.get(key);
    if (!tracer) this.nextTracers.set(key, (tracer = new RequestSpansOnly(this.sdk.getTracer(name, version, options))));
    return tracer;
  }
}

type TracingState = { provider: BasicTracerProvider; service: string };
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
  trace.setGlobalTracerProvider(new FlowmailTracerProvider(provider));
  slot.__flowmailTracing = { provider, service };
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

const tracer = () => trace.getTracer("flowmail");

/**
 * Runs `fn` inside a span named `name` (a child of `parent`, else of the active span); the span ends when `fn` settles,
 * with an error status when it throws. With tracing off, `fn` runs as is and receives undefined.
 */
export async function withSpan<T>(name: string, attributes: Attributes, fn: (span: Span | undefined) => Promise<T>, parent?: Context): Promise<T> {
  if (!slot.__flowmailTracing) return fn(undefined);
  return tracer().startActiveSpan(name, { attributes }, parent ?? context.active(), async (span) => {
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
