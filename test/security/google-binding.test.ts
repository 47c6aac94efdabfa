// Issue 20, point 3: a Google consent started by account X and completed in another person's browser (no Flowmail
// cookie at all) must link nothing: the signed state carries the hash of a nonce that only the starting browser holds
// in a short-lived cookie (RFC 9700 §4.7.1). Also CONTRACT 15: the status answers 200 when Google is not configured.
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { GET as callbackRoute } from "@/app/api/integrations/google/callback/route";
import { GET as connectRoute } from "@/app/api/integrations/google/connect/route";
import { GET as statusRoute } from "@/app/api/integrations/google/status/route";
import { getDb } from "@/db/client";
import { googleLinks } from "@/db/schema";
import { resetConfig } from "@/lib/config";
import { createTestAccount } from "@/test/support/accounts";
import { startFakeGoogle, type FakeGoogle } from "@/test/support/fake-google";
import { call } from "@/test/support/http";

let google: FakeGoogle;

beforeAll(async () => {
  google = await startFakeGoogle();
});
afterAll(async () => {
  await google.close();
});
beforeEach(() => {
  google.configureApp();
  google.consentEmail = "victim@gmail.example";
});

async function startConsent(token: string): Promise<{ consent: URL; cookie: string }> {
  const res = await call(connectRoute, { path: "/api/integrations/google/connect", token });
  expect(res.status).toBe(302);
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0];
  expect(cookie).toMatch(/^flowmail_google_oauth=[\w-]{43}$/);
  return { consent: new URL(res.headers.get("location")!), cookie };
}

/** The consent at (fake) Google: it redirects the browser back with a code and the state. */
async function consentAtGoogle(consent: URL): Promise<URL> {
  const res = await fetch(consent, { redirect: "manual" });
  return new URL(res.headers.get("location")!);
}

const callback = (back: URL, headers: Record<string, string> = {}) =>
  call(callbackRoute, { path: `${back.pathname}${back.search}`, headers });

async function linkOf(accountId: string) {
  const db = await getDb();
  return (await db.select().from(googleLinks).where(eq(googleLinks.accountId, accountId)))[0];
}

describe("Google consent bound to the browser that started it", () => {
  it("links nothing when the consent completes in a browser without the binding cookie", async () => {
    const attacker = await createTestAccount();
    const { consent } = await startConsent(attacker.token);
    // The attacker sends the consent link to a victim, whose browser has no Flowmail cookie at all.
    const res = await callback(await consentAtGoogle(consent));
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/settings?google=error");
    expect(await linkOf(attacker.id)).toBeUndefined();
  });

  it("links nothing with another attempt's cookie, and leaves the attempt usable by its own browser", async () => {
    const owner = await createTestAccount();
    const { consent, cookie } = await startConsent(owner.token);
    const { cookie: someoneElses } = await startConsent((await createTestAccount()).token);
    const back = await consentAtGoogle(consent);
    expect((await callback(back, { cookie: someoneElses })).headers.get("location")).toBe("/settings?google=error");
    expect(await linkOf(owner.id)).toBeUndefined();
    expect((await callback(back, { cookie })).headers.get("location")).toBe("/settings?google=connected");
  });

  it("links in the browser that started it, and clears the cookie", async () => {
    const owner = await createTestAccount();
    const { consent, cookie } = await startConsent(owner.token);
    const res = await callback(await consentAtGoogle(consent), { cookie });
    expect(res.headers.get("location")).toBe("/settings?google=connected");
    expect(res.headers.get("set-cookie")).toMatch(/^flowmail_google_oauth=; Path=\/api\/integrations\/google\/callback; Max-Age=0/);
    expect((await linkOf(owner.id))?.googleEmail).toBe("victim@gmail.example");
  });
});

describe("Google status without a Google client", () => {
  it("answers 200 { connected: false, configured: false }", async () => {
    delete process.env.GOOGLE_CLIENT_ID;
    delete process.env.GOOGLE_CLIENT_SECRET;
    resetConfig();
    const account = await createTestAccount();
    const res = await call(statusRoute, { token: account.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ connected: false, configured: false });
  });
});
