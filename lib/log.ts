/* Minimal structured logger: one JSON line per event on stderr/stdout. */
type Level = "debug" | "info" | "warn" | "error";
const order: Record<Level | "silent", number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

function threshold(): number {
  const env = process.env.LOG_LEVEL as Level | "silent" | undefined;
  if (env && env in order) return order[env];
  return process.env.VITEST ? order.silent : order.info;
}

function write(level: Level, message: string, fields?: Record<string, unknown>) {
  if (order[level] < threshold()) return;
  const line = JSON.stringify({ level, time: new Date().toISOString(), message, ...serialize(fields) });
  if (level === "error" || level === "warn") console.error(line);
  else console.log(line);
}

function serialize(fields?: Record<string, unknown>) {
  if (!fields) return {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) out[k] = v instanceof Error ? serializeError(v, 0) : v;
  return out;
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

export const log = {
  debug: (m: string, f?: Record<string, unknown>) => write("debug", m, f),
  info: (m: string, f?: Record<string, unknown>) => write("info", m, f),
  warn: (m: string, f?: Record<string, unknown>) => write("warn", m, f),
  error: (m: string, f?: Record<string, unknown>) => write("error", m, f),
};
