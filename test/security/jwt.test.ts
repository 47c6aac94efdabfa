import { SignJWT, UnsecuredJWT } from "jose";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ACCESS_TOKEN_TTL_SECONDS, JWT_AUDIENCE, JWT_ISSUER, signAccessToken } from "@/lib/auth/tokens";
import { ok, route } from "@/lib/http/route";
import { createTestAccount } from "@/test/support/accounts";
import { call } from "@/test/support/http";

const whoami = route({ auth: true }, async ({ account }) => ok({ id: account.id }));
const mutate = route({ auth: true, body: z.strictObject({ x: z.number() }) }, async ({ account }) => ok({ id: account.id }));
const secret = () => new TextEncoder().encode(process.env.AUTH_SECRET!);

async function forge(claims: Record<string, unknown>, opts: { alg?: string; key?: Uint8Array; exp?: number } = {}) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ typ: "access", ...claims })
    .setProtectedHeader({ alg: opts.alg ?? "HS256" })
    .setIssuedAt(now)
    .setExpirationTime(opts.exp ?? now + 600)
    .sign(opts.key ?? secret());
}

function expect401(res: { status: number; headers: Headers; body: any }, code: string) {
  expect(res.status).toBe(401);
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
  expect(res.body.code).toBe(code);
}

describe("access token hostile inputs", () => {
  it("accepts a genuine token", async () => {
    const user = await createTestAccount();
    const res = await call(whoami, { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(user.id);
  });

  it("refuses a missing or malformed Authorization header", async () => {
    expect401(await call(whoami), "unauthorized");
    expect401(await call(whoami, { headers: { authorization: "Basic abc" } }), "invalid_token");
    expect401(await call(whoami, { headers: { authorization: "Bearer" } }), "invalid_token");
    expect401(await call(whoami, { token: "not.a.jwt" }), "invalid_token");
  });

  it("refuses alg:none", async () => {
    const user = await createTestAccount();
    const token = new UnsecuredJWT({ typ: "access" })
      .setSubject(user.id)
      .setIssuer(JWT_ISSUER)
      .setAudience(JWT_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime("10m")
      .encode();
    expect401(await call(whoami, { token }), "invalid_token");
  });

  it("refuses a tampered payload", async () => {
    const user = await createTestAccount();
    const other = await createTestAccount();
    const [h, , s] = user.token.split(".");
    const payload = Buffer.from(
      JSON.stringify({ typ: "access", sub: other.id, iss: JWT_ISSUER, aud: JWT_AUDIENCE, iat: 1, exp: 9999999999 }),
    ).toString("base64url");
    expect401(await call(whoami, { token: `${h}.${payload}.${s}` }), "invalid_token");
  });

  it("refuses a token signed with another key or another HMAC algorithm", async () => {
    const user = await createTestAccount();
    const base = { sub: user.id, iss: JWT_ISSUER, aud: JWT_AUDIENCE };
    expect401(await call(whoami, { token: await forge(base, { key: new TextEncoder().encode("x".repeat(48)) }) }), "invalid_token");
    expect401(await call(whoami, { token: await forge(base, { alg: "HS512" }) }), "invalid_token");
  });

  it("refuses an expired token with token_expired", async () => {
    const user = await createTestAccount();
    const old = await signAccessToken(user.id, Date.now() - (ACCESS_TOKEN_TTL_SECONDS + 5) * 1000);
    expect401(await call(whoami, { token: old }), "token_expired");
  });

  it("refuses a wrong audience, issuer or type", async () => {
    const user = await createTestAccount();
    expect401(await call(whoami, { token: await forge({ sub: user.id, iss: JWT_ISSUER, aud: "someone-else" }) }), "invalid_token");
    expect401(await call(whoami, { token: await forge({ sub: user.id, iss: "evil", aud: JWT_AUDIENCE }) }), "invalid_token");
    expect401(
      await call(whoami, { token: await forge({ sub: user.id, iss: JWT_ISSUER, aud: JWT_AUDIENCE, typ: "refresh" }) }),
      "invalid_token",
    );
  });

  it("refuses a token for an account that does not exist", async () => {
    expect401(await call(whoami, { token: await signAccessToken("usr_doesnotexistdoesnotexis") }), "invalid_token");
  });

  it("checks the token before reading the body", async () => {
    const res = await call(mutate, { json: { x: "not a number" } });
    expect401(res, "unauthorized");
  });
});
