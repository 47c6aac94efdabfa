/*
 * W3C trace context (`traceparent`) carried from a request to the run it enqueues. The run keeps it in its row, so
 * its spans are that trace's children in whichever process executes it, even one without tracing of its own request.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { context, isSpanContextValid, trace, TraceFlags, type Context, type SpanContext } from "@opentelemetry/api";

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The span context a `traceparent` value names, or undefined for a missing, malformed or all-zero one. */
export function parseTraceparent(value: string | null | undefined): SpanContext | undefined {
  const match = TRACEPARENT.exec((value ?? "").trim().toLowerCase());
  if (!match || match[1] === "ff") return undefined;
  const spanContext: SpanContext = { traceId: match[2], spanId: match[3], traceFlags: parseInt(match[4], 16) & TraceFlags.SAMPLED, isRemote: true };
  return isSpanContextValid(spanContext) ? spanContext : undefined;
}

export function formatTraceparent(spanContext: SpanContext): string {
  return `00-${spanContext.traceId}-${spanContext.spanId}-${(spanContext.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

/** A context whose parent is the span a stored `traceparent` names (or the root context when there is none). */
export function contextFromTraceparent(value: string | null | undefined): Context {
  const parent = parseTraceparent(value);
  return parent ? trace.setSpanContext(context.active(), parent) : context.active();
}

const requestTraceparent = new AsyncLocalStorage<string>();

/** Runs a request's handler with its incoming `traceparent` (when valid) at hand for `currentTraceparent`. */
export function withRequestTraceparent<T>(header: string | null, fn: () => T): T {
  const parsed = parseTraceparent(header);
  return parsed ? requestTraceparent.run(formatTraceparent(parsed), fn) : fn();
}

/**
 * The trace context a run enqueued now belongs to: the active span's when this process traces (the request's own span,
 * itself a child of the caller's), else the caller's `traceparent` as it came in; null when there is neither.
 */
export function currentTraceparent(): string | null {
  const span = trace.getActiveSpan();
  if (span && span.isRecording()) return formatTraceparent(span.spanContext());
  return requestTraceparent.getStore() ?? null;
}

/**
 * The `traceparent` an outbound request carries: the active span's when this process traces (the request is its
 * child), else the stored one it belongs to, passed on as it is; undefined when there is neither.
 */
export function outboundTraceparent(stored: string | null | undefined): string | undefined {
  const span = trace.getActiveSpan();
  if (span && span.isRecording()) return formatTraceparent(span.spanContext());
  const parsed = parseTraceparent(stored);
  return parsed ? formatTraceparent(parsed) : undefined;
}
