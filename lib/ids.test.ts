import { describe, expect, it } from "vitest";
import { looksLikeId, newId } from "./ids";

describe("newId", () => {
  it("gives 128 random bits per id, never the same twice across the byte pool's refills", () => {
    const ids = Array.from({ length: 2_000 }, () => newId("eml")); // 32,000 bytes: the 4 KiB pool refilled 7 times
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(looksLikeId("eml", id)).toBe(true);
    // Every one of the 16 bytes varies (no zeroed or repeated tail from a pool boundary).
    const bytes = ids.map((id) => Buffer.from(id.slice(4), "base64url"));
    expect(bytes.every((b) => b.length === 16)).toBe(true);
    for (let i = 0; i < 16; i++) expect(new Set(bytes.map((b) => b[i])).size).toBeGreaterThan(100);
  });
});
