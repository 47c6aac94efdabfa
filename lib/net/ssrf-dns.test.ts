// The resolver is replaced here so that host names can resolve to chosen addresses: every address a name
// resolves to is checked, and safeFetch connects to the checked address whatever the system resolver says.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

const answers: Record<string, string[]> = {
  "mixed.example": ["93.184.216.34", "10.0.0.7"],
  "v6-private.example": ["2606:4700::1", "fd12::1"],
  "public.example": ["93.184.216.34", "2606:4700::1"],
  "pinned.test": ["127.0.0.1"],
  "moving.test": ["127.0.0.1"],
};

vi.mock("node:dns/promises", () => ({
  lookup: vi.fn(async (host: string) => {
    const list = answers[host];
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return list.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  }),
}));

const { assertSafeTargetUrl, safeFetch } = await import("@/lib/net/ssrf");
const { createGuardedFetch } = await import("@/lib/net/guarded-fetch");

describe("assertSafeTargetUrl with DNS answers", () => {
  it("refuses a name when any of its addresses is private", async () => {
    await expect(assertSafeTargetUrl("https://mixed.example/hook", { allowPrivate: false })).rejects.toMatchObject({
      code: "validation_failed",
      message: "The host mixed.example resolves to 10.0.0.7 (private); only public addresses are allowed",
    });
    await expect(assertSafeTargetUrl("https://v6-private.example/", { allowPrivate: false })).rejects.toMatchObject({
      message: expect.stringContaining("fd12::1 (unique-local)"),
    });
  });

  it("accepts a name whose addresses are all public and returns them", async () => {
    const target = await assertSafeTargetUrl("https://public.example/x", { allowPrivate: false });
    expect(target.addresses).toEqual(["93.184.216.34", "2606:4700::1"]);
  });
});

describe("safeFetch connects to the checked address", () => {
  let server: http.Server;
  let port: number;
  const hosts: string[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hosts.push(req.headers.host ?? "");
      res.end("pinned");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("reaches a name only the checked answer knows, with its Host header", async () => {
    // The system resolver has never heard of pinned.test: the connection can only use the checked address.
    const res = await safeFetch(`http://pinned.test:${port}/x`, { timeoutMs: 5000, maxResponseBytes: 1024, allowPrivate: true });
    expect(res.body).toBe("pinned");
    expect(hosts).toEqual([`pinned.test:${port}`]);
  });

  it("does the same for the guarded fetch handed to SDKs", async () => {
    const res = await createGuardedFetch({ allowPrivate: true })(`http://pinned.test:${port}/y`);
    expect(await res.text()).toBe("pinned");
    expect(hosts.at(-1)).toBe(`pinned.test:${port}`);
  });

  it("reuses a kept-alive connection only for a request whose own check gave the same addresses", async () => {
    // One server on every interface sees which local address and client port each request came by.
    const seen: string[] = [];
    const any = http.createServer((req, res) => {
      seen.push(`${req.socket.localAddress}:${req.socket.remotePort}`);
      res.end("ok");
    });
    await new Promise<void>((resolve) => any.listen(0, "0.0.0.0", resolve));
    const anyPort = (any.address() as AddressInfo).port;
    try {
      const guarded = createGuardedFetch({ allowPrivate: true });
      const call = async () => expect(await (await guarded(`http://moving.test:${anyPort}/`)).text()).toBe("ok");
      await call();
      await call();
      // The name now resolves elsewhere: the next request connects to its own checked address, not the kept socket's.
      answers["moving.test"] = ["127.0.0.2"];
      await call();
      await call();
      expect(seen.map((s) => s.split(":")[0])).toEqual(["127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.2"]);
      expect(seen[1]).toBe(seen[0]);
      expect(seen[3]).toBe(seen[2]);
    } finally {
      any.closeAllConnections();
      await new Promise((resolve) => any.close(resolve));
    }
  });

  it("refuses in the guarded fetch a name that resolves to a private address", async () => {
    await expect(createGuardedFetch({ allowPrivate: false })("https://mixed.example/v1")).rejects.toMatchObject({
      code: "validation_failed",
    });
  });
});
