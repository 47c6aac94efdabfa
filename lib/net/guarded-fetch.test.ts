import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGuardedFetch } from "@/lib/net/guarded-fetch";

describe("createGuardedFetch", () => {
  let server: http.Server;
  let base: string;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === "/redirect") return void res.writeHead(302, { location: "http://127.0.0.1:1/" }).end();
      if (req.url === "/stream") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write("data: one\n\n");
        res.end("data: two\n\n");
        return;
      }
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () =>
        res
          .writeHead(200, { "content-type": "application/json", "set-cookie": ["a=1", "b=2"] })
          .end(JSON.stringify({ method: req.method, body, auth: req.headers.authorization, encoding: req.headers["accept-encoding"], type: req.headers["content-type"] })),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("sends the request and returns a Response like fetch", async () => {
    const guarded = createGuardedFetch({ allowPrivate: true });
    const res = await guarded(`${base}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer k", "content-type": "application/json" },
      body: JSON.stringify({ model: "m" }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(await res.json()).toEqual({ method: "POST", body: '{"model":"m"}', auth: "Bearer k", encoding: "identity", type: "application/json" });
  });

  it("sends what fetch would for a Request, a byte body, and a string body without a content type", async () => {
    const guarded = createGuardedFetch({ allowPrivate: true });
    const fromRequest = await guarded(new Request(`${base}/r`, { method: "PUT", headers: { authorization: "Bearer r" }, body: "é" }));
    expect(await fromRequest.json()).toEqual({ method: "PUT", body: "é", auth: "Bearer r", encoding: "identity", type: "text/plain;charset=UTF-8" });
    const bytes = await guarded(new URL(`${base}/b`), { method: "POST", body: new TextEncoder().encode("bytes") });
    expect(await bytes.json()).toEqual({ method: "POST", body: "bytes", encoding: "identity" });
    const text = await guarded(`${base}/t`, { method: "POST", body: "plain" });
    expect(await text.json()).toEqual({ method: "POST", body: "plain", encoding: "identity", type: "text/plain;charset=UTF-8" });
  });

  it("stops a request when the caller's signal aborts, with the signal's reason", async () => {
    const controller = new AbortController();
    controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
    await expect(createGuardedFetch({ allowPrivate: true })(`${base}/x`, { method: "POST", body: "{}", signal: controller.signal })).rejects.toMatchObject({ name: "AbortError", cause: { name: "TimeoutError" } });
  });

  it("streams the body", async () => {
    const res = await createGuardedFetch({ allowPrivate: true })(`${base}/stream`);
    expect(await res.text()).toBe("data: one\n\ndata: two\n\n");
  });

  it("returns redirects without following them", async () => {
    const res = await createGuardedFetch({ allowPrivate: true })(`${base}/redirect`);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("http://127.0.0.1:1/");
  });

  it("refuses a private target before connecting when private targets are not allowed", async () => {
    await expect(createGuardedFetch({ allowPrivate: false })(`${base}/x`)).rejects.toMatchObject({ code: "validation_failed" });
  });
});
