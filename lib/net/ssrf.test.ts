import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "@/lib/errors";
import { classifyAddress, expandIPv6 } from "@/lib/net/ip-classify";
import { assertSafeTargetUrl, safeFetch, SafeFetchError } from "@/lib/net/ssrf";

describe("classifyAddress", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "link-local"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["100.127.255.255", "carrier-grade NAT"],
    ["0.0.0.0", "unspecified/this network"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "reserved/broadcast"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["0:0:0:0:0:0:0:1", "loopback"],
    ["fd00::1", "unique-local"],
    ["fc00::", "unique-local"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
    ["::ffff:7f00:1", "IPv4-mapped loopback"],
    ["::ffff:a9fe:a9fe", "IPv4-mapped link-local"],
    ["::127.0.0.1", "IPv4-mapped loopback"],
    ["64:ff9b::10.0.0.1", "NAT64 private"],
    ["2002:7f00:1::", "6to4 loopback"],
    ["2001:db8::1", "documentation"],
    ["localhost", "not an IP address"],
  ])("refuses %s (%s)", (address, reason) => {
    expect(classifyAddress(address)).toBe(reason);
  });

  it.each(["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "2002:0808:0808::"])(
    "accepts the public address %s",
    (address) => {
      expect(classifyAddress(address)).toBeNull();
    },
  );

  it("expands IPv6 forms to eight groups", () => {
    expect(expandIPv6("::1")).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
    expect(expandIPv6("1::")).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    expect(expandIPv6("::ffff:1.2.3.4")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
  });
});

async function refusal(url: string): Promise<AppError> {
  const error = await assertSafeTargetUrl(url, { allowPrivate: false }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe("assertSafeTargetUrl without private targets", () => {
  it.each([
    "https://127.1/",
    "https://0x7f.1/",
    "https://017700000001/",
    "https://[::ffff:127.0.0.1]/",
    "https://169.254.169.254/latest/meta-data/",
    "https://localhost/",
    "https://LOCALHOST./",
    "https://api.localhost/",
    "https://0.0.0.0/",
    "https://[::1]/",
    "https://[fd00::1]/",
    "https://2130706433/",
    "https://10.0.0.1/",
    "https://[fe80::1]/",
  ])("refuses %s with 422 validation_failed", async (url) => {
    const error = await refusal(url);
    expect(error.status).toBe(422);
    expect(error.code).toBe("validation_failed");
    expect(error.message).toMatch(/public addresses|loopback name/);
  });

  it("refuses http:// even to a public address", async () => {
    const error = await refusal("http://8.8.8.8/");
    expect(error.message).toBe("The URL must use https://");
  });

  it.each(["not a url", "ftp://8.8.8.8/", "https://user:pw@8.8.8.8/", "file:///etc/passwd"])("refuses %s", async (url) => {
    const error = await refusal(url);
    expect(error.code).toBe("validation_failed");
  });

  it("refuses a host name that does not resolve", async () => {
    const error = await refusal("https://no-such-host.invalid/");
    expect(error.message).toContain("could not be resolved");
  });

  it("accepts a public IP literal and returns the address it checked", async () => {
    const target = await assertSafeTargetUrl("https://8.8.8.8/hook", { allowPrivate: false });
    expect(target.addresses).toEqual(["8.8.8.8"]);
    expect(target.url.pathname).toBe("/hook");
  });
});

describe("assertSafeTargetUrl with private targets allowed", () => {
  it("accepts http and loopback", async () => {
    const target = await assertSafeTargetUrl("http://127.0.0.1:9/", { allowPrivate: true });
    expect(target.addresses).toEqual(["127.0.0.1"]);
  });

  it("still refuses other schemes", async () => {
    await expect(assertSafeTargetUrl("gopher://127.0.0.1/", { allowPrivate: true })).rejects.toMatchObject({
      code: "validation_failed",
    });
  });
});

describe("safeFetch", () => {
  let server: http.Server;
  let base: string;
  const seenHosts: string[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seenHosts.push(req.headers.host ?? "");
      if (req.url === "/redirect") {
        res.writeHead(302, { location: "http://127.0.0.1:1/elsewhere" }).end("moved");
      } else if (req.url === "/big") {
        res.writeHead(200);
        res.end(Buffer.alloc(200_000, "x"));
      } else if (req.url === "/hang") {
        res.writeHead(200);
        res.write("partial");
      } else {
        let body = "";
        req.on("data", (c) => (body += c));
        req.on("end", () => res.writeHead(201, { "x-echo": req.method ?? "" }).end(`got:${body}`));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://localhost:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("posts a body and preserves the Host header of the URL", async () => {
    const res = await safeFetch(`${base}/echo`, {
      method: "POST",
      body: "hello",
      timeoutMs: 5000,
      maxResponseBytes: 1024,
      allowPrivate: true,
    });
    expect(res.status).toBe(201);
    expect(res.body).toBe("got:hello");
    expect(res.headers["x-echo"]).toBe("POST");
    expect(seenHosts.at(-1)).toBe(new URL(base).host);
  });

  it("does not follow redirects", async () => {
    const res = await safeFetch(`${base}/redirect`, { timeoutMs: 5000, maxResponseBytes: 1024, allowPrivate: true });
    expect(res.status).toBe(302);
    expect(res.body).toBe("moved");
  });

  it("reads at most maxResponseBytes of the body", async () => {
    const res = await safeFetch(`${base}/big`, { timeoutMs: 5000, maxResponseBytes: 65_536, allowPrivate: true });
    expect(res.body.length).toBe(65_536);
    expect(res.truncated).toBe(true);
  });

  it("times out a response that never ends", async () => {
    const error = await safeFetch(`${base}/hang`, { timeoutMs: 300, maxResponseBytes: 1024, allowPrivate: true }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SafeFetchError);
    expect((error as Error).message).toBe("Timed out after 300 ms");
  });

  it("refuses a private target before connecting when private targets are not allowed", async () => {
    const before = seenHosts.length;
    await expect(
      safeFetch(`${base}/echo`, { timeoutMs: 5000, maxResponseBytes: 1024, allowPrivate: false }),
    ).rejects.toMatchObject({ code: "validation_failed" });
    expect(seenHosts.length).toBe(before);
  });

  it("reports a refused connection as a SafeFetchError", async () => {
    const error = await safeFetch("http://127.0.0.1:1/", { timeoutMs: 5000, maxResponseBytes: 1024, allowPrivate: true }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SafeFetchError);
    expect((error as Error).message).toBe("Connection refused");
  });
});
