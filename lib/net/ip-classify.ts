import { isIPv4, isIPv6 } from "node:net";

// Pure classification of IP literals for the SSRF guard. Only addresses that are routable on the public
// internet pass; everything a server could use to reach itself, its cloud metadata service, its private
// network or a reserved block is refused. Input is an address as dns.lookup or the URL parser gives it
// (dotted-quad IPv4, or IPv6 without brackets, optionally with a zone id).

type V4Range = readonly [base: number, prefixLength: number, label: string];

const V4_BLOCKED: readonly V4Range[] = [
  [ip4(0, 0, 0, 0), 8, "unspecified/this network"],
  [ip4(10, 0, 0, 0), 8, "private"],
  [ip4(100, 64, 0, 0), 10, "carrier-grade NAT"],
  [ip4(127, 0, 0, 0), 8, "loopback"],
  [ip4(169, 254, 0, 0), 16, "link-local"],
  [ip4(172, 16, 0, 0), 12, "private"],
  [ip4(192, 0, 0, 0), 24, "IETF protocol assignments"],
  [ip4(192, 0, 2, 0), 24, "documentation"],
  [ip4(192, 88, 99, 0), 24, "6to4 relay anycast"],
  [ip4(192, 168, 0, 0), 16, "private"],
  [ip4(198, 18, 0, 0), 15, "benchmarking"],
  [ip4(198, 51, 100, 0), 24, "documentation"],
  [ip4(203, 0, 113, 0), 24, "documentation"],
  [ip4(224, 0, 0, 0), 4, "multicast"],
  [ip4(240, 0, 0, 0), 4, "reserved/broadcast"],
];

function ip4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

function parseV4(address: string): number {
  const parts = address.split(".").map(Number);
  return ip4(parts[0]!, parts[1]!, parts[2]!, parts[3]!);
}

function inV4Range(value: number, [base, prefixLength]: V4Range): boolean {
  if (prefixLength === 0) return true;
  const mask = (0xffffffff << (32 - prefixLength)) >>> 0;
  return (value & mask) >>> 0 === (base & mask) >>> 0;
}

function classifyV4Number(value: number): string | null {
  const hit = V4_BLOCKED.find((range) => inV4Range(value, range));
  return hit ? hit[2] : null;
}

/** Expands an IPv6 literal (with "::" and an optional trailing dotted IPv4) into its eight 16-bit groups. */
export function expandIPv6(address: string): number[] {
  let text = address.toLowerCase();
  const zone = text.indexOf("%");
  if (zone >= 0) text = text.slice(0, zone);
  const lastColon = text.lastIndexOf(":");
  const tail = text.slice(lastColon + 1);
  if (tail.includes(".")) {
    const v4 = parseV4(tail);
    text = `${text.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head, rest] = text.split("::") as [string, string | undefined];
  const headGroups = head === "" ? [] : head.split(":");
  const restGroups = rest === undefined || rest === "" ? [] : rest.split(":");
  const fill = rest === undefined ? 0 : 8 - headGroups.length - restGroups.length;
  const groups = [...headGroups, ...Array<string>(fill).fill("0"), ...restGroups].map((g) => parseInt(g, 16));
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) {
    throw new Error(`Not an IPv6 address: ${address}`);
  }
  return groups;
}

function embeddedV4(groups: number[], at: number): number {
  return ((groups[at]! << 16) | groups[at + 1]!) >>> 0;
}

function classifyV6(address: string): string | null {
  const g = expandIPv6(address);
  const firstSixZero = g.slice(0, 6).every((x) => x === 0);
  if (firstSixZero && g[6] === 0 && g[7] === 0) return "unspecified";
  if (firstSixZero && g[6] === 0 && g[7] === 1) return "loopback";
  // ::ffff:a.b.c.d (IPv4-mapped) and ::a.b.c.d (deprecated IPv4-compatible) reach the embedded IPv4 address.
  if (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0)) {
    const inner = classifyV4Number(embeddedV4(g, 6));
    return inner ? `IPv4-mapped ${inner}` : null;
  }
  // ::ffff:0:a.b.c.d (::ffff:0:0:0/96, SIIT IPv4-translated) is translated to the embedded IPv4 address too.
  if (g.slice(0, 4).every((x) => x === 0) && g[4] === 0xffff && g[5] === 0) {
    const inner = classifyV4Number(embeddedV4(g, 6));
    return inner ? `IPv4-translated ${inner}` : null;
  }
  // 64:ff9b::/96 (NAT64) translates to the embedded IPv4 address.
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) {
    const inner = classifyV4Number(embeddedV4(g, 6));
    return inner ? `NAT64 ${inner}` : null;
  }
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return "NAT64 local-use";
  // 2002::/16 (6to4) embeds an IPv4 address in groups 1-2.
  if (g[0] === 0x2002) {
    const inner = classifyV4Number(embeddedV4(g, 1));
    return inner ? `6to4 ${inner}` : null;
  }
  if (g[0] === 0x2001 && g[1] === 0) return "Teredo";
  if (g[0] === 0x2001 && g[1] === 0x0db8) return "documentation";
  if (g[0] === 0x0100 && g[1] === 0 && g[2] === 0 && g[3] === 0) return "discard";
  if ((g[0]! & 0xfe00) === 0xfc00) return "unique-local";
  if ((g[0]! & 0xffc0) === 0xfe80) return "link-local";
  if ((g[0]! & 0xffc0) === 0xfec0) return "site-local";
  if ((g[0]! & 0xff00) === 0xff00) return "multicast";
  return null;
}

/**
 * Why an address must not be contacted ("loopback", "private", …), or null when it is a public address.
 * Anything that is not a well-formed IP literal is refused too ("not an IP address").
 */
export function classifyAddress(address: string): string | null {
  const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  if (isIPv4(bare)) return classifyV4Number(parseV4(bare));
  const withoutZone = bare.split("%")[0]!;
  if (isIPv6(withoutZone)) return classifyV6(withoutZone);
  return "not an IP address";
}

export function isPublicAddress(address: string): boolean {
  return classifyAddress(address) === null;
}
