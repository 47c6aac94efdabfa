import { describe, expect, it } from "vitest";
import { isConnectionLoss, isDatabaseUnavailable } from "@/db/connection-errors";

const withCode = (code: string, extra: Record<string, unknown> = {}) => Object.assign(new Error(code), { code }, extra);
// postgres.js attaches the failed query to a socket error as non-enumerable properties.
const driverSocketError = (code: string) => {
  const e = withCode(code);
  Object.defineProperties(e, { query: { value: "select 1" }, parameters: { value: [] } });
  return e;
};

describe("isDatabaseUnavailable (503 instead of 500)", () => {
  it("is true for a lost connection and for the driver's own socket errors, wrapped or not", () => {
    expect(isDatabaseUnavailable(withCode("57P01"))).toBe(true);
    expect(isDatabaseUnavailable(withCode("CONNECTION_CLOSED"))).toBe(true);
    expect(isDatabaseUnavailable(driverSocketError("ECONNREFUSED"))).toBe(true);
    expect(isDatabaseUnavailable(new Error("Failed query", { cause: driverSocketError("ECONNRESET") }))).toBe(true);
  });

  it("is false for socket errors that are not the driver's, for our own closed pool, and for other errors", () => {
    expect(isDatabaseUnavailable(withCode("ECONNRESET"))).toBe(false); // e.g. a client aborting its upload
    expect(isDatabaseUnavailable(new Error("fetch failed", { cause: withCode("ECONNREFUSED") }))).toBe(false);
    expect(isDatabaseUnavailable(withCode("CONNECTION_ENDED"))).toBe(false);
    expect(isDatabaseUnavailable(withCode("23505"))).toBe(false);
    expect(isDatabaseUnavailable(new Error("boom"))).toBe(false);
  });

  it("isConnectionLoss (the engine's test) keeps CONNECTION_ENDED and ignores generic socket codes", () => {
    expect(isConnectionLoss(withCode("CONNECTION_ENDED"))).toBe(true);
    expect(isConnectionLoss(driverSocketError("ECONNREFUSED"))).toBe(false);
  });
});

describe("server-side codes that mean the database is unavailable", () => {
  it("counts too many connections, a database not accepting connections, and every 08xxx as an outage", () => {
    expect(isDatabaseUnavailable(withCode("53300"))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('database "flowmail" is not currently accepting connections'), { code: "55000" }))).toBe(true);
    expect(isDatabaseUnavailable(new Error("Failed query", { cause: withCode("08P01") }))).toBe(true);
    expect(isConnectionLoss(withCode("57P03"))).toBe(true);
  });

  it("does not take 55000 for an outage when it is about something else", () => {
    expect(isDatabaseUnavailable(Object.assign(new Error("cannot refresh materialized view concurrently"), { code: "55000" }))).toBe(false);
    expect(isDatabaseUnavailable(withCode("55P03"))).toBe(false);
  });
});
