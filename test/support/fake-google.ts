import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { SignJWT } from "jose";
import { GET as callbackRoute } from "@/app/api/integrations/google/callback/route";
import { GET as connectRoute } from "@/app/api/integrations/google/connect/route";
import { resetConfig } from "@/lib/config";
import { call } from "./http";

// A local stand-in for Google's OAuth server and the Drive v3 API, small but strict: it checks the client
// credentials, the redirect URI and the PKCE verifier like Google does, issues refresh and access tokens,
// answers invalid_grant for revoked refresh tokens, and serves files.list / files.get (metadata and
// alt=media) / files.export to bearers of its access tokens. Tests drive the real google-auth-library and
// @googleapis/drive at it through the endpoint overrides of the config.

export type FakeDriveFile = { id: string; name: string; mimeType: string; content: string; modifiedTime?: string };

type PendingCode = { clientId: string; redirectUri: string; challenge: string; scope: string; email: string };

export type FakeGoogle = {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** The Google address the next consent belongs to. */
  consentEmail: string;
  /** Scopes granted by the next consent (a person may untick Drive). */
  grantedScope: string | null;
  files: FakeDriveFile[];
  /** Every token request, by grant type. */
  tokenRequests: { grantType: string; refreshToken?: string }[];
  revoked: string[];
  driveRequests: string[];
  lastListQuery: string | null;
  /** Makes every refresh_token grant fail with invalid_grant (the person revoked access at Google). */
  revokeAllRefreshTokens(): void;
  /** Sets env for the app (GOOGLE_* overrides) and resets its config. */
  configureApp(): void;
  close(): Promise<void>;
};

const DRIVE_SCOPE = "https://www.googleapis.com/auth/drive.readonly";

export async function startFakeGoogle(): Promise<FakeGoogle> {
  const codes = new Map<string, PendingCode>();
  const refreshTokens = new Map<string, { revoked: boolean; email: string }>();
  const accessTokens = new Set<string>();
  const signingKey = randomBytes(32);

  const state: Omit<FakeGoogle, "baseUrl" | "configureApp" | "close"> = {
    clientId: "fake-client-id.apps.googleusercontent.com",
    clientSecret: "fake-client-secret",
    consentEmail: "Person@Gmail.example",
    grantedScope: null,
    files: [],
    tokenRequests: [],
    revoked: [],
    driveRequests: [],
    lastListQuery: null,
    revokeAllRefreshTokens() {
      for (const entry of refreshTokens.values()) entry.revoked = true;
    },
  };

  const idToken = (email: string) =>
    new SignJWT({ email, email_verified: true })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer("https://accounts.google.com")
      .setAudience(state.clientId)
      .setSubject(`sub-${email}`)
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(signingKey);

  const issueAccessToken = () => {
    const token = `ya29.${randomBytes(12).toString("hex")}`;
    accessTokens.add(token);
    return token;
  };

  async function handleToken(req: http.IncomingMessage, res: http.ServerResponse) {
    const form = new URLSearchParams(await readBody(req));
    const grantType = form.get("grant_type") ?? "";
    state.tokenRequests.push({ grantType, refreshToken: form.get("refresh_token") ?? undefined });
    if (form.get("client_id") !== state.clientId || form.get("client_secret") !== state.clientSecret) {
      return sendJson(res, 401, { error: "invalid_client", error_description: "The OAuth client was not found." });
    }
    if (grantType === "authorization_code") {
      const pending = codes.get(form.get("code") ?? "");
      codes.delete(form.get("code") ?? "");
      const verifier = form.get("code_verifier") ?? "";
      const challenge = createHash("sha256").update(verifier).digest("base64url");
      if (!pending || pending.redirectUri !== form.get("redirect_uri") || pending.challenge !== challenge) {
        return sendJson(res, 400, { error: "invalid_grant", error_description: "Bad Request" });
      }
      const refreshToken = `1//${randomBytes(16).toString("hex")}`;
      refreshTokens.set(refreshToken, { revoked: false, email: pending.email });
      return sendJson(res, 200, {
        access_token: issueAccessToken(),
        expires_in: 3599,
        refresh_token: refreshToken,
        scope: pending.scope,
        token_type: "Bearer",
        id_token: await idToken(pending.email),
      });
    }
    if (grantType === "refresh_token") {
      const entry = refreshTokens.get(form.get("refresh_token") ?? "");
      if (!entry || entry.revoked) {
        return sendJson(res, 400, { error: "invalid_grant", error_description: "Token has been expired or revoked." });
      }
      return sendJson(res, 200, { access_token: issueAccessToken(), expires_in: 3599, scope: DRIVE_SCOPE, token_type: "Bearer" });
    }
    return sendJson(res, 400, { error: "unsupported_grant_type" });
  }

  function handleConsent(url: URL, res: http.ServerResponse) {
    const p = url.searchParams;
    if (p.get("client_id") !== state.clientId || p.get("code_challenge_method") !== "S256" || !p.get("code_challenge")) {
      return sendJson(res, 400, { error: "invalid_request" });
    }
    const code = `4/${randomBytes(12).toString("hex")}`;
    codes.set(code, {
      clientId: state.clientId,
      redirectUri: p.get("redirect_uri") ?? "",
      challenge: p.get("code_challenge") ?? "",
      scope: state.grantedScope ?? p.get("scope") ?? "",
      email: state.consentEmail,
    });
    const back = new URL(p.get("redirect_uri") ?? "");
    back.searchParams.set("state", p.get("state") ?? "");
    back.searchParams.set("code", code);
    res.writeHead(302, { location: back.toString() }).end();
  }

  function handleDrive(req: http.IncomingMessage, url: URL, res: http.ServerResponse) {
    const auth = req.headers.authorization ?? "";
    if (!accessTokens.has(auth.replace(/^Bearer /, ""))) {
      return sendJson(res, 401, { error: { code: 401, message: "Request had invalid authentication credentials." } });
    }
    state.driveRequests.push(`${req.method} ${url.pathname}${url.search}`);
    const match = /^\/drive\/v3\/files(?:\/([^/]+)(\/export)?)?$/.exec(url.pathname);
    if (!match) return sendJson(res, 404, { error: { code: 404, message: "Not Found" } });
    const [, fileId, exportPath] = match;
    if (!fileId) return listFiles(url, res);
    const file = state.files.find((f) => f.id === decodeURIComponent(fileId));
    if (!file) return sendJson(res, 404, { error: { code: 404, message: `File not found: ${fileId}.` } });
    if (exportPath) {
      if (file.mimeType !== "application/vnd.google-apps.spreadsheet" || url.searchParams.get("mimeType") !== "text/csv") {
        return sendJson(res, 403, { error: { code: 403, message: "Export only supports Docs Editors files." } });
      }
      return res.writeHead(200, { "content-type": "text/csv" }).end(file.content);
    }
    if (url.searchParams.get("alt") === "media") {
      if (file.mimeType.startsWith("application/vnd.google-apps.")) {
        return sendJson(res, 403, { error: { code: 403, message: "Only files with binary content can be downloaded." } });
      }
      return res.writeHead(200, { "content-type": file.mimeType }).end(file.content);
    }
    const isNative = file.mimeType.startsWith("application/vnd.google-apps.");
    return sendJson(res, 200, {
      id: file.id,
      name: file.name,
      mimeType: file.mimeType,
      ...(isNative ? {} : { size: String(Buffer.byteLength(file.content)) }),
    });
  }

  function listFiles(url: URL, res: http.ServerResponse) {
    const q = url.searchParams.get("q") ?? "";
    state.lastListQuery = q;
    const contains = /name contains '((?:[^'\\]|\\.)*)'/.exec(q)?.[1]?.replace(/\\(.)/g, "$1");
    const files = state.files
      .filter((f) => q.includes(`'${f.mimeType}'`))
      .filter((f) => contains === undefined || f.name.toLowerCase().includes(contains.toLowerCase()))
      .map((f) => ({ id: f.id, name: f.name, mimeType: f.mimeType, modifiedTime: f.modifiedTime ?? "2026-11-20T10:00:00.000Z" }));
    return sendJson(res, 200, { files });
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://fake-google");
    const route = `${req.method} ${url.pathname}`;
    const done = (error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: String(error) });
    };
    if (route === "GET /o/oauth2/v2/auth") return handleConsent(url, res);
    if (route === "POST /token") return void handleToken(req, res).catch(done);
    if (route === "POST /revoke") {
      const token = url.searchParams.get("token") ?? "";
      state.revoked.push(token);
      const entry = refreshTokens.get(token);
      if (entry) entry.revoked = true;
      return sendJson(res, 200, {});
    }
    if (url.pathname.startsWith("/drive/v3/")) return handleDrive(req, url, res);
    sendJson(res, 404, { error: "not found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return Object.assign(state, {
    baseUrl,
    configureApp() {
      process.env.GOOGLE_CLIENT_ID = state.clientId;
      process.env.GOOGLE_CLIENT_SECRET = state.clientSecret;
      process.env.GOOGLE_OAUTH_AUTH_URL = `${baseUrl}/o/oauth2/v2/auth`;
      process.env.GOOGLE_OAUTH_TOKEN_URL = `${baseUrl}/token`;
      process.env.GOOGLE_OAUTH_REVOKE_URL = `${baseUrl}/revoke`;
      process.env.GOOGLE_API_ROOT_URL = `${baseUrl}/`;
      resetConfig();
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  });
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => resolve(body));
    req.on("error", reject);
  });
}

function sendJson(res: http.ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(body));
}

/** Links the account's Google through the real connect and callback routes and the fake consent page. */
export async function linkGoogleAccount(token: string): Promise<void> {
  const start = await call(connectRoute, { path: "/api/integrations/google/connect", token });
  if (start.status !== 302) throw new Error(`connect answered ${start.status}: ${start.text}`);
  const consent = await fetch(start.headers.get("location")!, { redirect: "manual" });
  const back = new URL(consent.headers.get("location")!);
  // The same browser finishes the consent: it sends back the binding cookie the connect answer set.
  const cookie = (start.headers.get("set-cookie") ?? "").split(";")[0];
  const done = await call(callbackRoute, { path: `${back.pathname}${back.search}`, headers: { cookie } });
  if (done.headers.get("location") !== "/settings?google=connected") throw new Error(`callback went to ${done.headers.get("location")}`);
}
