// IPv6 spellings that carry an IPv4 address are judged by that address: IPv4-mapped (::ffff:0:0/96) and
// IPv4-translated (::ffff:0:0:0/96) forms of loopback, private and metadata addresses are not public.
import { describe, expect, it } from "vitest";
import { classifyAddress, isPublicAddress } from "@/lib/net/ip-classify";

describe("IPv4 inside IPv6", () => {
  it("refuses mapped and translated private, loopback and metadata addresses", () => {
    for (const address of [
      "::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:0:127.0.0.1", "::ffff:0:7f00:1", "::ffff:0:a9fe:a9fe",
      "::ffff:0:10.0.0.1", "[::ffff:0:192.168.1.1]", "::ffff:0:0:0", "::ffff:0:0",
    ]) {
      expect(isPublicAddress(address), address).toBe(false);
    }
    expect(classifyAddress("::ffff:0:169.254.169.254")).toBe("IPv4-translated link-local");
  });

  it("still lets public addresses through in either form", () => {
    expect(isPublicAddress("::ffff:8.8.8.8")).toBe(true);
    expect(isPublicAddress("::ffff:0:8.8.8.8")).toBe(true);
    expect(isPublicAddress("2606:4700:4700::1111")).toBe(true);
  });
});
