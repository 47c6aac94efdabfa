import { describe, expect, it } from "vitest";
import { sanitizeFilename } from "./sanitize-filename";

describe("sanitizeFilename", () => {
  it("keeps only the last path part, without control or bidi characters", () => {
    expect(sanitizeFilename("../../etc/passwd")).toBe("passwd");
    expect(sanitizeFilename("C:\\Users\\me\\list.csv")).toBe("list.csv");
    expect(sanitizeFilename("bad\u0000na\u0007me\u202Evsc.csv")).toBe("badnamevsc.csv");
    expect(sanitizeFilename("..hidden.csv")).toBe("hidden.csv");
  });

  it("falls back to a neutral name and caps the length", () => {
    expect(sanitizeFilename("")).toBe("upload.csv");
    expect(sanitizeFilename("/")).toBe("upload.csv");
    expect(sanitizeFilename("é".repeat(400))).toBe("é".repeat(255));
  });
});
