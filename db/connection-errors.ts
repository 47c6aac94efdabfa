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

function codes(error: unknown): string[] {
  const out: string[] = [];
  for (let e: unknown = error, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") out.push(code);
  }
  return out;
}

export function isConnectionLoss(error: unknown): boolean {
  return codes(error).some((c) => CONNECTION_LOSS_CODES.has(c));
}

/**
 * An error that reached a route handler because the database is unavailable (lost connection, refused, restarting):
 * answered 503 with Retry-After instead of a 500. Route handlers make no outbound calls of their own that would let
 * a socket error of another service through unhandled.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return codes(error).some((c) => CONNECTION_LOSS_CODES.has(c) || UNREACHABLE_CODES.has(c));
}
