import { describe, expect, it } from "vitest";
import { describeLineProblem, parsePastedAddresses } from "./pasted-addresses";

describe("the Suppressions paste box", () => {
  it("names every piece that is not an address by its line and text, and keeps the good ones", () => {
    const { addresses, problems } = parsePastedAddresses("ann@example.com\r\nBOB@example.com, carol@example\n\n  dave@@example.com  \nann@example.com; eve@example.org");
    expect(addresses).toEqual(["ann@example.com", "bob@example.com", "eve@example.org"]);
    expect(problems).toEqual([
      { line: 2, text: "carol@example" },
      { line: 4, text: "dave@@example.com" },
    ]);
    expect(describeLineProblem(problems[1])).toBe('Line 4: "dave@@example.com" is not an email address.');
  });

  it("a column copied from a sheet (tabs, blank lines) has no problem", () => {
    expect(parsePastedAddresses("a@example.com\tb@example.com\n\n").problems).toEqual([]);
  });
});
