import { eq } from "drizzle-orm";
import { SignJWT } from "jose";
import { encode } from "next-auth/jwt";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { GET as callbackRoute } from "@/app/api/integrations/google/callback/route";
import { GET as connectRoute } from "@/app/api/integrations/google/connect/route";
import { GET as filesRoute } from "@/app/api/integrations/google/files/route";
import { DELETE as disconnectRoute } from "@/app/api/integrations/google/route";
import { GET as statusRoute } from "@/app/api/integrations/google/status/route";
import { getDb } from "@/db/client";
import { googleLinks, oauthStates } from "@/db/schema";
import { resetConfig } from "@/lib/config";
import { decryptSecret } from "@/lib/crypto";
import { loadDriveFileRows } from "@/lib/google/drive-rows";
import { hasActiveGoogleLink } from "@/lib/google/links";
import { createOAuthState } from "@/lib/google/oauth-state";
import { createTestAccount } from "@/test/support/accounts";
import { startFakeGoogle, type FakeGoogle } from "@/test/support/fake-google";
import { call } from "@/test/support/http";

let google: FakeGoogle;
const SHEET = "application/vnd.google-apps.spreadsheet";

beforeAll(async () => {
  google = await startFakeGoogle();
});

afterAll(async () => {
  await google.close();
});

beforeEach(() => {
  google.configureApp();
  google.grantedScope = null;
  google.consentEmail = "Person@Gmail.example";
  google.files = [];
});

type Account = Awaited<ReturnType<typeof createTestAccount>>;

/** The binding cookie of the last consent started, as the browser that started it keeps it. */
let bindingCookie = "";

function keepBindingCookie(res: { headers: Headers }): void {
  const set = res.headers.get("set-cookie") ?? "";
  expect(set).toMatch(/^flowmail_google_oauth=[\w-]{43}; Path=\/api\/integrations\/google\/callback; Max-Age=600; HttpOnly; SameSite=Lax/);
  bindingCookie = set.split(";")[0];
}

async function startConsent(account: Account): Promise<URL> {
  const res = await call(connectRoute, { path: "/api/integrations/google/connect", token: account.token });
  expect(res.status).toBe(302);
  keepBindingCookie(res);
  return new URL(res.headers.get("location")!);
}

/** Plays the person's browser: consent at the fake Google, which redirects back with a code and the state. */
async function consentAtGoogle(consentUrl: URL): Promise<URL> {
  const res = await fetch(consentUrl, { redirect: "manual" });
  expect(res.status).toBe(302);
  return new URL(res.headers.get("location")!);
}

/** The callback in the browser that started the consent (its binding cookie added to any other cookie). */
async function callback(back: URL, headers: Record<string, string> = {}) {
  const cookie = [headers.cookie, bindingCookie].filter(Boolean).join("; ");
  return call(callbackRoute, { path: `${back.pathname}${back.search}`, headers: { ...headers, cookie } });
}

async function connect(account: Account): Promise<void> {
  const back = await consentAtGoogle(await startConsent(account));
  const res = await callback(back);
  expect(res.headers.get("location")).toBe("/settings?google=connected");
}

/** The web UI's next-auth session cookie for the account, as the browser would send it. */
async function sessionCookie(accountId: string): Promise<string> {
  const name = "authjs.session-token";
  const token = await encode({ token: { sub: accountId, authTime: Date.now() }, secret: process.env.AUTH_SECRET!, salt: name });
  return `${name}=${token}`;
}

async function storedLink(accountId: string) {
  const db = await getDb();
  const [link] = await db.select().from(googleLinks).where(eq(googleLinks.accountId, accountId));
  return link;
}

describe("GET /api/integrations/google/connect", () => {
  it("redirects to the consent page with offline access, forced consent, PKCE S256 and a signed state", async () => {
    const account = await createTestAccount();
    const url = await startConsent(account);
    expect(`${url.origin}${url.pathname}`).toBe(`${google.baseUrl}/o/oauth2/v2/auth`);
    const p = url.searchParams;
    expect(p.get("access_type")).toBe("offline");
    expect(p.get("prompt")).toBe("consent");
    expect(p.get("response_type")).toBe("code");
    expect(p.get("client_id")).toBe(google.clientId);
    expect(p.get("code_challenge_method")).toBe("S256");
    expect(p.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(p.get("scope")).toBe("openid email https://www.googleapis.com/auth/drive.readonly");
    expect(p.get("redirect_uri")).toBe("http://localhost:3000/api/integrations/google/callback");
    expect(p.get("state")!.split(".")).toHaveLength(3);
  });

  it("works from a browser with the session cookie, and the callback completes in that browser", async () => {
    const account = await createTestAccount();
    const cookie = await sessionCookie(account.id);
    const res = await call(connectRoute, { path: "/api/integrations/google/connect", headers: { cookie } });
    expect(res.status).toBe(302);
    keepBindingCookie(res);
    const back = await consentAtGoogle(new URL(res.headers.get("location")!));
    const done = await callback(back, { cookie });
    expect(done.headers.get("location")).toBe("/settings?google=connected");
    expect((await storedLink(account.id)).status).toBe("active");
  });

  it("answers 401 without a token", async () => {
    const res = await call(connectRoute, { path: "/api/integrations/google/connect" });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("unauthorized");
  });

  it("answers 503 google_not_configured without client id and secret (the status: 200 configured false)", async () => {
    delete process.env.GOOGLE_CLIENT_ID;
    delete process.env.GOOGLE_CLIENT_SECRET;
    resetConfig();
    const account = await createTestAccount();
    const res = await call(connectRoute, { path: "/api/integrations/google/connect", token: account.token });
    expect(res.status).toBe(503);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.body.code).toBe("google_not_configured");
    const status = await call(statusRoute, { token: account.token });
    expect(status.status).toBe(200); // CONTRACT 15: the status says so instead of failing
    expect(status.body).toEqual({ connected: false, configured: false });
    const files = await call(filesRoute, { path: "/api/integrations/google/files", token: account.token });
    expect(files.status).toBe(503);
  });
});

describe("GET /api/integrations/google/callback", () => {
  it("exchanges the code, stores the refresh token encrypted and redirects to settings", async () => {
    const account = await createTestAccount();
    await connect(account);
    const link = await storedLink(account.id);
    expect(link.googleEmail).toBe("person@gmail.example");
    expect(link.status).toBe("active");
    expect(link.scopes).toContain("https://www.googleapis.com/auth/drive.readonly");
    expect(link.refreshTokenEncrypted.startsWith("v1.")).toBe(true);
    expect(decryptSecret(link.refreshTokenEncrypted)).toMatch(/^1\/\//);
    const codeGrant = google.tokenRequests.filter((r) => r.grantType === "authorization_code");
    expect(codeGrant.length).toBeGreaterThan(0);

    const status = await call(statusRoute, { token: account.token });
    expect(status.status).toBe(200);
    expect(status.body).toEqual({
      connected: true,
      email: "person@gmail.example",
      scopes: link.scopes,
      connectedAt: link.connectedAt.toISOString(),
    });
  });

  it("redirects to the error page and stores nothing when the state is missing", async () => {
    const account = await createTestAccount();
    const back = await consentAtGoogle(await startConsent(account));
    back.searchParams.delete("state");
    const res = await callback(back);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/settings?google=error");
    expect(await storedLink(account.id)).toBeUndefined();
  });

  it("refuses a state with a wrong signature", async () => {
    const account = await createTestAccount();
    const back = await consentAtGoogle(await startConsent(account));
    const [header, payload] = back.searchParams.get("state")!.split(".");
    back.searchParams.set("state", `${header}.${payload}.${"A".repeat(43)}`);
    const res = await callback(back);
    expect(res.headers.get("location")).toBe("/settings?google=error");
    expect(await storedLink(account.id)).toBeUndefined();
  });

  it("refuses a state signed with another key for a real row", async () => {
    const account = await createTestAccount();
    const back = await consentAtGoogle(await startConsent(account));
    const db = await getDb();
    const [row] = await db.select().from(oauthStates).where(eq(oauthStates.accountId, account.id));
    const forged = await new SignJWT({})
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer("flowmail")
      .setAudience("flowmail:google-oauth-state")
      .setSubject(row.id)
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode("some-other-secret-some-other-secret"));
    back.searchParams.set("state", forged);
    const res = await callback(back);
    expect(res.headers.get("location")).toBe("/settings?google=error");
    expect(await storedLink(account.id)).toBeUndefined();
  });

  it("refuses an expired state", async () => {
    const account = await createTestAccount();
    const consent = await startConsent(account);
    // A state made 11 minutes ago, for the PKCE verifier of a fresh consent: only its age is wrong.
    const db = await getDb();
    const [row] = await db.select().from(oauthStates).where(eq(oauthStates.accountId, account.id));
    const nonce = bindingCookie.split("=")[1];
    const old = await createOAuthState(account.id, row.codeVerifier, nonce, new Date(Date.now() - 11 * 60 * 1000));
    consent.searchParams.set("state", old);
    const res = await callback(await consentAtGoogle(consent));
    expect(res.headers.get("location")).toBe("/settings?google=error");
    expect(await storedLink(account.id)).toBeUndefined();
  });

  it("refuses a replayed state", async () => {
    const account = await createTestAccount();
    const consent = await startConsent(account);
    const first = await callback(await consentAtGoogle(consent));
    expect(first.headers.get("location")).toBe("/settings?google=connected");
    const db = await getDb();
    await db.delete(googleLinks).where(eq(googleLinks.accountId, account.id));
    // Same state, even with a fresh code from Google: the row was spent.
    const replay = await callback(await consentAtGoogle(consent));
    expect(replay.headers.get("location")).toBe("/settings?google=error");
    expect(await storedLink(account.id)).toBeUndefined();
  });

  it("refuses when the browser's session cookie is another account's", async () => {
    const owner = await createTestAccount();
    const other = await createTestAccount();
    const back = await consentAtGoogle(await startConsent(owner));
    const res = await callback(back, { cookie: await sessionCookie(other.id) });
    expect(res.headers.get("location")).toBe("/settings?google=error");
    expect(await storedLink(owner.id)).toBeUndefined();
    expect(await storedLink(other.id)).toBeUndefined();
  });

  it("links the account the state names, and refuses when the browser is signed in as another account", async () => {
    const owner = await createTestAccount();
    const other = await createTestAccount();
    const back = await consentAtGoogle(await startConsent(owner));
    const res = await callback(back, { authorization: `Bearer ${other.token}` });
    expect(res.headers.get("location")).toBe("/settings?google=error");
    expect(await storedLink(owner.id)).toBeUndefined();
    expect(await storedLink(other.id)).toBeUndefined();
    // The state was spent by that attempt: the owner starts again and it works for the owner only.
    await connect(owner);
    expect((await storedLink(owner.id)).status).toBe("active");
    expect(await storedLink(other.id)).toBeUndefined();
  });

  it("stores nothing when the code exchange fails (wrong PKCE verifier)", async () => {
    const account = await createTestAccount();
    const consent = await startConsent(account);
    consent.searchParams.set("code_challenge", "x".repeat(43));
    const res = await callback(await consentAtGoogle(consent));
    expect(res.headers.get("location")).toBe("/settings?google=error");
    expect(await storedLink(account.id)).toBeUndefined();
  });

  it("stores nothing when the person refused consent or did not grant Drive access", async () => {
    const account = await createTestAccount();
    const back = await consentAtGoogle(await startConsent(account));
    back.searchParams.delete("code");
    back.searchParams.set("error", "access_denied");
    expect((await callback(back)).headers.get("location")).toBe("/settings?google=error");

    google.grantedScope = "openid email";
    const noDrive = await callback(await consentAtGoogle(await startConsent(account)));
    expect(noDrive.headers.get("location")).toBe("/settings?google=error");
    expect(await storedLink(account.id)).toBeUndefined();
  });
});

describe("status and disconnect", () => {
  it("answers connected false when nothing is linked", async () => {
    const account = await createTestAccount();
    const res = await call(statusRoute, { token: account.token });
    expect(res.body).toEqual({ connected: false });
  });

  it("revokes at Google and deletes the link", async () => {
    const account = await createTestAccount();
    await connect(account);
    const refreshToken = decryptSecret((await storedLink(account.id)).refreshTokenEncrypted);
    const res = await call(disconnectRoute, { method: "DELETE", token: account.token });
    expect(res.status).toBe(204);
    expect(google.revoked).toContain(refreshToken);
    expect(await storedLink(account.id)).toBeUndefined();
    expect((await call(statusRoute, { token: account.token })).body).toEqual({ connected: false });
    expect((await call(disconnectRoute, { method: "DELETE", token: account.token })).status).toBe(204);
  });
});

describe("Drive files and rows", () => {
  beforeEach(() => {
    google.files = [
      { id: "csv1", name: "customers.csv", mimeType: "text/csv", content: "\ufeffname,email\nAda,ada@example.com\nBob,bob@example.com\n" },
      { id: "sheet1", name: "Leads sheet", mimeType: SHEET, content: "email;score\nx@example.com;4\n" },
      { id: "doc1", name: "notes", mimeType: "application/vnd.google-apps.document", content: "hello" },
      { id: "bad1", name: "broken.csv", mimeType: "text/csv", content: "a,a\n1,2\n" },
    ];
  });

  it("lists CSV files and Sheets for the picker, with a name search", async () => {
    const account = await createTestAccount();
    await connect(account);
    const all = await call(filesRoute, { path: "/api/integrations/google/files", token: account.token });
    expect(all.status).toBe(200);
    expect(all.body.items.map((f: { id: string }) => f.id).sort()).toEqual(["bad1", "csv1", "sheet1"]);
    expect(all.body.items[0]).toEqual({ id: expect.any(String), name: expect.any(String), mimeType: expect.any(String), modifiedTime: expect.any(String) });

    const search = await call(filesRoute, { path: "/api/integrations/google/files?q=lead's", token: account.token });
    expect(google.lastListQuery).toContain("name contains 'lead\\'s'");
    expect(search.body.items).toEqual([]);
    const leads = await call(filesRoute, { path: "/api/integrations/google/files?q=Leads", token: account.token });
    expect(leads.body.items.map((f: { id: string }) => f.id)).toEqual(["sheet1"]);
  });

  it("answers 409 google_not_connected when nothing is linked", async () => {
    const account = await createTestAccount();
    const res = await call(filesRoute, { path: "/api/integrations/google/files", token: account.token });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("google_not_connected");
  });

  it("downloads a CSV file with the upload rules (BOM dropped, rows that inherit nothing)", async () => {
    const account = await createTestAccount();
    await connect(account);
    const { columns, rows } = await loadDriveFileRows(account.id, "csv1");
    expect(columns).toEqual(["name", "email"]);
    expect(rows).toEqual([
      Object.assign(Object.create(null), { name: "Ada", email: "ada@example.com" }),
      Object.assign(Object.create(null), { name: "Bob", email: "bob@example.com" }),
    ]);
    expect(Object.getPrototypeOf(Object.getPrototypeOf(rows[0]))).toBeNull();
    expect("toString" in rows[0]).toBe(false);
    expect(google.driveRequests.some((r) => r.startsWith("GET /drive/v3/files/csv1?") && r.includes("alt=media"))).toBe(true);
  });

  it("exports a Sheet as CSV", async () => {
    const account = await createTestAccount();
    await connect(account);
    const { columns, rows } = await loadDriveFileRows(account.id, "sheet1");
    expect(columns).toEqual(["email", "score"]);
    expect({ ...rows[0] }).toEqual({ email: "x@example.com", score: "4" });
    expect(google.driveRequests.some((r) => r.startsWith("GET /drive/v3/files/sheet1/export?") && r.includes("mimeType=text%2Fcsv"))).toBe(true);
  });

  it("fails with invalid_csv naming the file for a duplicate header", async () => {
    const account = await createTestAccount();
    await connect(account);
    await expect(loadDriveFileRows(account.id, "bad1")).rejects.toMatchObject({
      code: "invalid_csv",
      message: expect.stringMatching(/^Drive file "broken\.csv" is not a valid CSV: /),
    });
  });

  it("refuses a file that is neither CSV nor Sheet, an unknown file, and a file over UPLOAD_MAX_BYTES", async () => {
    const account = await createTestAccount();
    await connect(account);
    await expect(loadDriveFileRows(account.id, "doc1")).rejects.toThrow(/not a CSV file or a Google Sheet/);
    await expect(loadDriveFileRows(account.id, "nope")).rejects.toMatchObject({ code: "not_found" });
    process.env.UPLOAD_MAX_BYTES = "20";
    resetConfig();
    try {
      await expect(loadDriveFileRows(account.id, "csv1")).rejects.toMatchObject({ code: "payload_too_large" });
      await expect(loadDriveFileRows(account.id, "sheet1")).rejects.toMatchObject({ code: "payload_too_large" });
    } finally {
      delete process.env.UPLOAD_MAX_BYTES;
      resetConfig();
    }
  });

  it("without a link fails with the connect sentence", async () => {
    const account = await createTestAccount();
    await expect(loadDriveFileRows(account.id, "csv1")).rejects.toThrow(
      /^Google Drive is not connected: connect it in Settings$/,
    );
  });

  it("invalid_grant marks the link broken, fails with the exact sentence and stops calling Google", async () => {
    const account = await createTestAccount();
    await connect(account);
    expect(await hasActiveGoogleLink(account.id)).toBe(true);
    google.revokeAllRefreshTokens();
    const before = google.tokenRequests.length;
    const error = await loadDriveFileRows(account.id, "csv1").catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe("Google account link expired: reconnect it");
    expect(google.tokenRequests.length - before).toBe(1);
    expect((await storedLink(account.id)).status).toBe("broken");
    expect(await hasActiveGoogleLink(account.id)).toBe(false);

    // A second run (or a retry) fails at once without asking Google again.
    await expect(loadDriveFileRows(account.id, "csv1")).rejects.toThrow("Google account link expired: reconnect it");
    expect(google.tokenRequests.length - before).toBe(1);

    const status = await call(statusRoute, { token: account.token });
    expect(status.body).toEqual({ connected: false, reason: "expired", email: "person@gmail.example" });
    const files = await call(filesRoute, { path: "/api/integrations/google/files", token: account.token });
    expect(files.status).toBe(409);
    expect(files.body.detail).toBe("Google account link expired: reconnect it");

    // Reconnecting repairs the link.
    await connect(account);
    expect((await loadDriveFileRows(account.id, "csv1")).rows).toHaveLength(2);
  });
});
