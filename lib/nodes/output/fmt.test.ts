import { describe, expect, it } from "vitest";
import { fmt } from "./execute";

describe("fmt (counts in OUTPUT's log lines)", () => {
  it("writes integers as toLocaleString('en-US') does, without ICU", () => {
    for (const n of [0, 7, 999, 1_000, 12_345, 999_999, 1_000_000, 40_000, 5_000_000_000, -1, -1_234, -1_234_567]) {
      expect(fmt(n)).toBe(n.toLocaleString("en-US"));
    }
  });
});
