/*
 * The one logger of every server process (web, worker, migrations): pino, one JSON object per line in production
 * (LOG_FORMAT=json, the production default) and human-readable lines in development (LOG_FORMAT=pretty). Each line
 * has `level`, `time`, `msg`, and, where they apply, `runId`, `workflowId`, `accountId`, `nodeId` (bound with
 * `withLogContext` or `log.child`) and `traceId` (the active OpenTelemetry span). Secrets, tokens, passwords, codes
 * and email bodies are censored by key wherever they sit in the first two levels of a line's fields.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { createRequire } from "node:module";
import path from "node:path";
import { trace } from "@opentelemetry/api";
import pino, { type DestinationStream, type Logger as PinoLogger } from "pino";

export type LogFields = Record<string, unknown>;
type Level = "debug" | "info" | "warn" | "error";

export type Logger = {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** A logger whose every line carries `bindings` (a run's or node's ids). */
  child(bindings: LogFields): Logger;
};

/** Keys whose values never reach a log line, at the top level and one level down (`{ error: { token } }`). */
const SECRET_KEYS = [
  "password", "newPassword", "currentPassword", "token", "accessToken", "refreshToken", "idToken", "apiKey", "api_key",
  "secret", "clientSecret", "signingKey", "authorization", "Authorization", "cookie", "Cookie", "otp", "oneTimeCode",
  "verificationCode", "html", "text", "body", "emailBody", "headers", "smtpUrl", "databaseUrl", "connectionString",
];
export const REDACT_PATHS = SECRET_KEYS.flatMap((k) => [k, `*.${k}`]);

const levels = ["debug", "info", "warn", "error", "silent"] as const;

function levelFromEnv(): (typeof levels)[number] {
  const env = process.env.LOG_LEVEL as (typeof levels)[number] | undefined;
  if (env && levels.includes(env)) return env;
  return process.env.VITEST ? "silent" : "info";
}

/** The same rule as lib/config.ts's `logFormat`: LOG_FORMAT, else JSON in production and pretty lines otherwise. */
export function logFormatFromEnv(env: NodeJS.ProcessEnv = process.env): "json" | "pretty" {
  if (env.LOG_FORMAT === "json" || env.LOG_FORMAT === "pretty") return env.LOG_FORMAT;
  return env.NODE_ENV === "production" ? "json" : "pretty";
}

const context = new AsyncLocalStorage<LogFields>();

/**
 * Runs `fn` with `fields` bound to every line logged inside it, however deep (a run's executor binds its ids here, so
 * the node and sender code it calls logs them without passing a logger around). Nested calls add to the outer fields.
 */
export function withLogContext<T>(fields: LogFields, fn: () => T): T {
  const outer = context.getStore();
  return context.run(outer ? { ...outer, ...fields } : fields, fn);
}

/** Fields bound by the enclosing withLogContext calls, and the trace id of the active span when tracing is on. */
function mixin(): LogFields {
  const bound = context.getStore();
  const span = trace.getActiveSpan();
  if (!span) return bound ?? {};
  const { traceId, traceFlags } = span.spanContext();
  // A span that is not recorded (tracing off: the no-op tracer) has the all-zero id: nothing to correlate with.
  if (traceFlags === 0 && /^0+$/.test(traceId)) return bound ?? {};
  return { ...bound, traceId };
}

/**
 * Pretty lines come from pino-pretty used as a stream in this thread: a worker-thread transport resolves its target
 * from a file path at run time, which Next.js's server bundle breaks. pino-pretty is a development dependency: where
 * it is not installed (a production image), lines stay JSON.
 */
function prettyStreams(): { out: DestinationStream; err: DestinationStream } | undefined {
  try {
    const require = createRequire(path.join(process.cwd(), "package.json"));
    const pretty = require("pino-pretty") as (options: Record<string, unknown>) => DestinationStream;
    const options = { colorize: Boolean(process.stdout.isTTY), translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname", sync: true };
    return { out: pretty({ ...options, destination: 1 }), err: pretty({ ...options, destination: 2 }) };
  } catch {
    return undefined;
  }
}

function createPino(): PinoLogger {
  const pretty = logFormatFromEnv() === "pretty" ? prettyStreams() : undefined;
  // Warnings and errors on stderr, the rest on stdout (dedupe: each line goes to one of them).
  const streams = pretty ?? { out: pino.destination({ fd: 1, sync: true }), err: pino.destination({ fd: 2, sync: true }) };
  return pino(
    {
      level: levelFromEnv(),
      base: undefined,
      messageKey: "msg",
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: "[redacted]" },
      mixin,
    },
    pino.multistream(
      [
        { level: "debug", stream: streams.out },
        { level: "warn", stream: streams.err },
      ],
      { dedupe: true },
    ),
  );
}

const globalForLog = globalThis as unknown as { __flowmailPino?: PinoLogger };

/** The process's pino instance (kept on globalThis: Next.js may evaluate this module more than once per process). */
export function rootLogger(): PinoLogger {
  return (globalForLog.__flowmailPino ??= createPino());
}

function serialize(fields?: LogFields): LogFields | undefined {
  if (!fields) return undefined;
  let out: LogFields | undefined;
  for (const [k, v] of Object.entries(fields)) {
    if (v instanceof Error) {
      out ??= { ...fields };
      out[k] = serializeError(v, 0);
    }
  }
  return out ?? fields;
}

/**
 * An error with its `code` (SQLSTATE, driver or errno code) and its `cause` chain: drizzle wraps a driver error as
 * "Failed query: …" whose own message says nothing about why; the cause holds the code and the server's sentence.
 */
function serializeError(error: Error, depth: number): Record<string, unknown> {
  const e = error as Error & { code?: unknown; cause?: unknown; severity?: unknown; detail?: unknown };
  const cause = e.cause;
  return {
    name: e.name,
    message: e.message,
    ...(e.code !== undefined ? { code: e.code } : {}),
    ...(typeof e.severity === "string" ? { severity: e.severity } : {}),
    ...(typeof e.detail === "string" ? { detail: e.detail } : {}),
    stack: e.stack,
    ...(cause !== undefined && depth < 4
      ? { cause: cause instanceof Error ? serializeError(cause, depth + 1) : typeof cause === "object" ? cause : String(cause) }
      : {}),
  };
}

function wrap(get: () => PinoLogger): Logger {
  const write = (level: Level) => (message: string, fields?: LogFields) => {
    const logger = get();
    if (!logger.isLevelEnabled(level)) return;
    const serialized = serialize(fields);
    if (serialized) logger[level](serialized, message);
    else logger[level](message);
  };
  return {
    debug: write("debug"),
    info: write("info"),
    warn: write("warn"),
    error: write("error"),
    child: (bindings) => {
      let child: PinoLogger | undefined;
      return wrap(() => (child ??= get().child(bindings)));
    },
  };
}

export const log: Logger = wrap(rootLogger);

/**
 * A refusal to start (bad configuration): always printed on stderr, whatever LOG_LEVEL says, as one JSON line in the
 * JSON format or as the plain sentence otherwise. Written with console.error, synchronously, before the process exits.
 */
export function logFatal(message: string): void {
  console.error(logFormatFromEnv() === "json" ? JSON.stringify({ level: "fatal", time: new Date().toISOString(), msg: message }) : message);
}
