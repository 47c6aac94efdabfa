// After sign-in the browser follows `?next=` only to a path of this origin, however the path is spelt.
import { describe, expect, it } from "vitest";
import { safeNext } from "@/lib/client/safe-next";

const ORIGIN = "http://127.0.0.1:3000";

describe("safeNext", () => {
  it("keeps paths of this origin, with their query and hash", () => {
    expect(safeNext("/workflows/wf_1?tab=runs#x", ORIGIN)).toBe("/workflows/wf_1?tab=runs#x");
    expect(safeNext("/settings", ORIGIN)).toBe("/settings");
  });

  it("refuses everything that resolves to another origin or is not a path", () => {
    for (const next of [
      "/\\evil.example", "/\\/evil.example", "//evil.example", "/\t/evil.example", "/\n/evil.example",
      "https://evil.example", "javascript:alert(1)", "evil.example", "\\\\evil.example", "", null, undefined,
    ]) {
      const target = safeNext(next, ORIGIN);
      expect(target, String(next)).toBe("/workflows");
      expect(new URL(target, ORIGIN).origin).toBe(ORIGIN);
    }
  });
});
