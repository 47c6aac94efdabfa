/**
 * Error codes of a lost database connection (server restart, pg_terminate_backend), from PostgreSQL or postgres.js.
 * Generic socket codes (ECONNRESET…) are left out on purpose: a node's own HTTP calls raise them too, and those must
 * fail the node, not resume the run forever.
 */
const CONNECTION_LOSS_CODES = new Set([
  "57P01", "57P02", "57P03", "08000", "08001", "08003", "08004", "08006",
  "CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED", "CONNECT_TIMEOUT",
]);

/** Socket errors of a database that cannot be reached at all (down, restarting). */
const UNREACHABLE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENOTFOUND", "EAI_AGAIN"]);

/** The error and its causes (drizzle wraps the driver's error), with their codes. */
function chain(error: unknown): { code: string | undefined; error: object }[] {
  const out: { code: string | undefined; error: object }[] = [];
  for (let e: unknown = error, depth = 0; e && typeof e === "object" && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    out.push({ code: typeof code === "string" ? code : undefined, error: e });
  }
  return out;
}

export function isConnectionLoss(error: unknown): boolean {
  return chain(error).some((e) => e.code !== undefined && CONNECTION_LOSS_CODES.has(e.code));
}

/**
 * An error that reached a route handler because the database is unavailable (lost connection, refused, restarting):
 * answered 503 with Retry-After instead of a 500. A socket error counts only when it is the driver's (postgres.js
 * attaches the failed query to it): a client that aborts its upload (ECONNRESET) or another service's socket error is
 * not a database outage. CONNECTION_ENDED (our own pool closed) is a bug, so it stays a 500.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return chain(error).some(
    (e) =>
      e.code !== undefined &&
      ((CONNECTION_LOSS_CODES.has(e.code) && e.code !== "CONNECTION_ENDED") ||
        (UNREACHABLE_CODES.has(e.code) && ("query" in e.error || "parameters" in e.error))),
  );
}
