// The same-origin check on cookie-authenticated mutations accepts the address the browser really used (Host,
// X-Forwarded-Host behind a trusted proxy, localhost ↔ 127.0.0.1 outside production) and nothing else.
import { encode } from "next-auth/jwt";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { PATCH as patchAccount } from "@/app/api/account/route";
import { getConfig, resetConfig } from "@/lib/config";
import { createTestAccount } from "@/test/support/accounts";

const COOKIE = "authjs.session-token";
let cookie: string;
const savedEnv = { ...process.env };

beforeAll(async () => {
  const account = await createTestAccount();
  const token = await encode({ token: { sub: account.id, authTime: Date.now() }, secret: getConfig().authSecret, salt: COOKIE });
  cookie = `${COOKIE}=${token}`;
});

afterEach(() => {
  for (const key of ["TRUST_PROXY", "NODE_ENV", "MAILBOX_ENABLED"] as const) {
    if (savedEnv[key] === undefined) delete process.env[key];
    else (process.env as Record<string, string>)[key] = savedEnv[key]!;
  }
  resetConfig();
});

/** A cookie-signed PATCH as a browser sends it: the URL Next reports, the Host typed, the page's Origin. */
async function patchFrom(requestUrl: string, headers: Record<string, string>): Promise<number> {
  const req = new Request(`${requestUrl}/api/account`, {
    method: "PATCH",
    headers: { "content-type": "application/json", cookie, ...headers },
    body: JSON.stringify({ fullName: "Origin Tester" }),
  });
  const res = await patchAccount(req, { params: Promise.resolve({}) });
  return res.status;
}

function setEnv(values: Record<string, string>) {
  Object.assign(process.env, values);
  resetConfig();
}

describe("Origin check", () => {
  it("accepts the Host the browser used even when the request URL names another address", async () => {
    // What `next dev` does when the page was opened at 127.0.0.1: it reports its URL as localhost.
    expect(await patchFrom("http://localhost:3000", { host: "127.0.0.1:3000", origin: "http://127.0.0.1:3000" })).toBe(200);
    expect(await patchFrom("http://localhost:4100", { host: "flowmail.test:4100", origin: "http://flowmail.test:4100" })).toBe(200);
  });

  it("treats localhost, 127.0.0.1 and [::1] as one host outside production, on the same port and scheme only", async () => {
    expect(await patchFrom("http://localhost:3000", { host: "localhost:3000", origin: "http://127.0.0.1:3000" })).toBe(200);
    expect(await patchFrom("http://127.0.0.1:3000", { host: "127.0.0.1:3000", origin: "http://[::1]:3000" })).toBe(200);
    expect(await patchFrom("http://localhost:3000", { host: "localhost:3000", origin: "http://127.0.0.1:3999" })).toBe(403);
    expect(await patchFrom("http://localhost:3000", { host: "localhost:3000", origin: "https://127.0.0.1:3000" })).toBe(403);
  });

  it("does not treat loopback names as one in production", async () => {
    setEnv({ NODE_ENV: "production", MAILBOX_ENABLED: "true" });
    expect(await patchFrom("http://localhost:4100", { host: "localhost:4100", origin: "http://127.0.0.1:4100" })).toBe(403);
    expect(await patchFrom("http://localhost:4100", { host: "127.0.0.1:4100", origin: "http://127.0.0.1:4100" })).toBe(200);
  });

  it("refuses other sites, a missing or opaque Origin, and garbage", async () => {
    expect(await patchFrom("http://localhost:3000", { host: "localhost:3000", origin: "https://evil.example" })).toBe(403);
    expect(await patchFrom("http://localhost:3000", { host: "localhost:3000", origin: "http://localhost.evil.example:3000" })).toBe(403);
    expect(await patchFrom("http://localhost:3000", { host: "localhost:3000", origin: "null" })).toBe(403);
    expect(await patchFrom("http://localhost:3000", { host: "localhost:3000", origin: "not a url" })).toBe(403);
    expect(await patchFrom("http://localhost:3000", { host: "localhost:3000" })).toBe(403);
  });

  it("uses X-Forwarded-Host and -Proto only behind a trusted proxy", async () => {
    const behindProxy = { host: "app:3000", "x-forwarded-host": "flowmail.example.com", "x-forwarded-proto": "https", origin: "https://flowmail.example.com" };
    expect(await patchFrom("http://app:3000", behindProxy)).toBe(403);
    setEnv({ TRUST_PROXY: "true" });
    expect(await patchFrom("http://app:3000", behindProxy)).toBe(200);
    // Trusting the proxy does not make any forwarded value pass: the Origin must still equal it.
    expect(await patchFrom("http://app:3000", { ...behindProxy, origin: "https://evil.example" })).toBe(403);
    expect(await patchFrom("http://app:3000", { ...behindProxy, origin: "http://flowmail.example.com" })).toBe(403);
  });
});
