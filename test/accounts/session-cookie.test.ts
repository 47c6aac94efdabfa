// The web UI's browser session: next-auth's Credentials sign-in through its real route handlers, then the
// session cookie accepted by authenticate() (with the same-origin check on mutations).
import { NextRequest } from "next/server";
import { describe, expect, it } from "vitest";
import { GET as getAccountRoute, PATCH as patchAccount } from "@/app/api/account/route";
import { POST as changePassword } from "@/app/api/account/password/route";
import { GET as nextAuthGet, POST as nextAuthPost } from "@/app/api/nextauth/[...nextauth]/route";
import { getDb } from "@/db/client";
import { accounts } from "@/db/schema";
import { eq } from "drizzle-orm";
import { call } from "@/test/support/http";
import { codeFromSubject, registerOk, uniqueEmail, verifyOk } from "./helpers";
import { GET as mailbox } from "@/app/api/dev/mailbox/route";

const ORIGIN = "http://localhost:3000";
const PASSWORD = "correct horse battery";

type Jar = Map<string, string>;

function storeCookies(jar: Jar, res: Response) {
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(";");
    const eqAt = pair.indexOf("=");
    const name = pair.slice(0, eqAt);
    const value = pair.slice(eqAt + 1);
    if (value === "" || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) jar.delete(name);
    else jar.set(name, value);
  }
}
const cookieHeader = (jar: Jar) => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");

async function nextAuth(handler: typeof nextAuthGet, path: string, jar: Jar, form?: Record<string, string>) {
  const req = new NextRequest(`${ORIGIN}/api/nextauth/${path}`, {
    method: form ? "POST" : "GET",
    headers: {
      cookie: cookieHeader(jar),
      ...(form ? { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN, "x-auth-return-redirect": "1" } : {}),
    },
    body: form ? new URLSearchParams(form).toString() : undefined,
  });
  const res = await handler(req);
  storeCookies(jar, res);
  return res;
}

/** Signs in through next-auth's Credentials provider; returns the cookie jar and the JSON answer. */
async function signInWith(credentials: Record<string, string>) {
  const jar: Jar = new Map();
  const csrf = await nextAuth(nextAuthGet, "csrf", jar);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const res = await nextAuth(nextAuthPost, "callback/credentials", jar, { ...credentials, csrfToken, callbackUrl: `${ORIGIN}/workflows` });
  const body = (await res.json()) as { url: string };
  return { jar, body, signedIn: [...jar.keys()].some((k) => k.startsWith("authjs.session-token")) };
}

async function verifiedAccount() {
  const email = uniqueEmail();
  await registerOk(email, PASSWORD);
  const inbox = await call(mailbox, { path: `/api/dev/mailbox?to=${encodeURIComponent(email)}` });
  const verified = await verifyOk(email, codeFromSubject(inbox.body.items[0].subject));
  return { email, accessToken: verified.body.accessToken as string };
}

const withCookie = (jar: Jar, headers: Record<string, string> = {}) => ({ cookie: cookieHeader(jar), ...headers });

describe("browser session", () => {
  it("signs in with email and password and authenticates API calls with the cookie", async () => {
    const { email } = await verifiedAccount();
    const { jar, signedIn, body } = await signInWith({ email, password: PASSWORD });
    expect(signedIn).toBe(true);
    expect(body.url).toBe(`${ORIGIN}/workflows`);
    const session = await nextAuth(nextAuthGet, "session", jar);
    expect(await session.json()).toMatchObject({ user: { email, id: expect.stringMatching(/^usr_/) } });
    const me = await call(getAccountRoute, { path: "/api/account", headers: withCookie(jar) });
    expect(me.status).toBe(200);
    expect(me.body.email).toBe(email);
  });

  it("signs in with the access token from verify-email", async () => {
    const { email, accessToken } = await verifiedAccount();
    const { jar, signedIn } = await signInWith({ accessToken });
    expect(signedIn).toBe(true);
    const me = await call(getAccountRoute, { path: "/api/account", headers: withCookie(jar) });
    expect(me.body.email).toBe(email);
  });

  it("refuses wrong credentials, an invalid access token and an unverified account", async () => {
    const { email } = await verifiedAccount();
    const wrong = await signInWith({ email, password: "not the password" });
    expect(wrong.signedIn).toBe(false);
    expect(wrong.body.url).toContain("code=invalid_credentials");
    const badToken = await signInWith({ accessToken: "not.a.token" });
    expect(badToken.signedIn).toBe(false);
    const pending = uniqueEmail();
    await registerOk(pending, PASSWORD);
    const unverified = await signInWith({ email: pending, password: PASSWORD });
    expect(unverified.signedIn).toBe(false);
    expect(unverified.body.url).toContain("code=email_not_verified");
  });

  it("shares the login throttle with POST /api/auth/login", async () => {
    const { email } = await verifiedAccount();
    for (let i = 0; i < 10; i++) expect((await signInWith({ email, password: `wrong-${i}` })).signedIn).toBe(false);
    const blocked = await signInWith({ email, password: PASSWORD });
    expect(blocked.signedIn).toBe(false);
    expect(blocked.body.url).toContain("code=rate_limited");
  });

  it("requires a same-origin Origin header on cookie-authenticated mutations", async () => {
    const { email } = await verifiedAccount();
    const { jar } = await signInWith({ email, password: PASSWORD });
    const patch = (headers: Record<string, string>) =>
      call(patchAccount, { method: "PATCH", path: "/api/account", json: { fullName: "Renamed" }, headers: withCookie(jar, headers) });
    const noOrigin = await patch({});
    expect(noOrigin.status).toBe(403);
    expect(noOrigin.body.code).toBe("forbidden");
    const foreign = await patch({ origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    const sameOrigin = await patch({ origin: ORIGIN });
    expect(sameOrigin.status).toBe(200);
    expect(sameOrigin.body.fullName).toBe("Renamed");
    // GET needs no Origin; a Bearer token needs no Origin either.
    expect((await call(getAccountRoute, { path: "/api/account", headers: withCookie(jar) })).status).toBe(200);
  });

  it("refuses a tampered cookie and a cookie signed with another secret", async () => {
    const { email } = await verifiedAccount();
    const { jar } = await signInWith({ email, password: PASSWORD });
    const [name, value] = [...jar].find(([k]) => k.startsWith("authjs.session-token"))!;
    const tampered = await call(getAccountRoute, { path: "/api/account", headers: { cookie: `${name}=${value.slice(0, -4)}AAAA` } });
    expect(tampered.status).toBe(401);
    expect(tampered.body.code).toBe("invalid_token");
    const { encode } = await import("next-auth/jwt");
    const [account] = await (await getDb()).select().from(accounts).where(eq(accounts.email, email));
    const forged = await encode({ token: { sub: account.id }, secret: "some-other-secret-some-other-secret", salt: name });
    expect((await call(getAccountRoute, { path: "/api/account", headers: { cookie: `${name}=${forged}` } })).status).toBe(401);
  });

  it("ends the browser session when the password changes", async () => {
    const { email } = await verifiedAccount();
    const { jar } = await signInWith({ email, password: PASSWORD });
    const changed = await call(changePassword, {
      method: "POST", path: "/api/account/password", headers: withCookie(jar, { origin: ORIGIN }),
      json: { currentPassword: PASSWORD, newPassword: "a brand new password" },
    });
    expect(changed.status).toBe(204);
    const me = await call(getAccountRoute, { path: "/api/account", headers: withCookie(jar) });
    expect(me.status).toBe(401);
    expect(me.body.code).toBe("invalid_token");
    const again = await signInWith({ email, password: "a brand new password" });
    expect((await call(getAccountRoute, { path: "/api/account", headers: withCookie(again.jar) })).status).toBe(200);
  });

  it("answers 401 unauthorized with neither a token nor a cookie", async () => {
    const res = await call(getAccountRoute, { path: "/api/account", headers: { cookie: "other=1" } });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("unauthorized");
  });
});
