// A malformed percent escape in an API path gets the API's problem+json 400, not a plain-text 500.
import { NextRequest } from "next/server";
import { describe, expect, it } from "vitest";
import { config, proxy } from "@/proxy";

describe("malformed percent escapes in API paths", () => {
  it("answers problem+json 400 bad_request", async () => {
    for (const path of ["/api/workflows/%E0%A4%A", "/api/runs/%", "/api/uploads/%zz", "/api/workflows/%C0%AF"]) {
      const res = proxy(new NextRequest(`http://127.0.0.1:3000${path}`));
      expect(res.status, path).toBe(400);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(await res.json()).toMatchObject({ status: 400, code: "bad_request" });
    }
  });

  it("lets well-formed paths through, and covers every API path", () => {
    const res = proxy(new NextRequest("http://127.0.0.1:3000/api/workflows/wf_abc%20def"));
    expect(res.headers.get("x-middleware-next")).toBe("1");
    expect(config.matcher).toBe("/api/:path*");
  });
});
