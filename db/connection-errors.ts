/**
 * Error codes of a database that went away or refuses us for a while: a server
 * restart or failover (57P01–57P03), pg_terminate_backend, too many connections (53300), connection-class errors
 * (08xxx), and the driver's own codes for a lost connection. Generic socket codes (ECONNRESET…) are matched only when
 * the driver raised them (see isDatabaseUnavailable): a node's own HTTP calls raise them too, and those must fail the
 * node, not resume the run forever.
 */
const CONNECTION_LOSS_CODES = new Set([
  "57P01", "57P02", "57P03", "53300",
  "CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED", "CONNECT_TIMEOUT",
]);

/** Socket errors of a database that cannot be reached at all (down, restarting). */
const UNREACHABLE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENOTFOUND", "EAI_AGAIN"]);

/**
 * 55000 (object_not_in_prerequisite_state) is also what PostgreSQL answers a new connection to a database with
 * ALLOW_CONNECTIONS false ("database … is not currently accepting connections"); elsewhere the same code means a
 * real error in a statement, so it counts only with that message.
 */
const NOT_ACCEPTING = /not currently accepting connections|not accepting connections/i;

type Link = { code: string | undefined; error: object };

/** The error and its causes (drizzle wraps the driver's error), with their codes. */
function chain(error: unknown): Link[] {
  const out: Link[] = [];
  for (let e: unknown = error, depth = 0; e && typeof e === "object" && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    out.push({ code: typeof code === "string" ? code : undefined, error: e });
  }
  return out;
}

function isLossLink(link: Link): boolean {
  const code = link.code;
  if (code === undefined) return false;
  if (CONNECTION_LOSS_CODES.has(code)) return true;
  if (/^08[0-9A-Z]{3}$/.test(code)) return true; // connection exception class
  return code === "55000" && NOT_ACCEPTING.test(String((link.error as { message?: unknown }).message ?? ""));
}

export function isConnectionLoss(error: unknown): boolean {
  return chain(error).some(isLossLink);
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
      ((isLossLink(e) && e.code !== "CONNECTION_ENDED") ||
        (UNREACHABLE_CODES.has(e.code) && ("query" in e.error || "parameters" in e.error))),
  );
}

/** The SQLSTATE or driver code of the first link that has one (for logs). */
export function databaseErrorCode(error: unknown): string | undefined {
  return chain(error).find((e) => e.code !== undefined)?.code;
}
