import "server-only";
import { OAuth2Client } from "google-auth-library";
import { getConfig } from "@/lib/config";
import { AppError } from "@/lib/errors";

export const GOOGLE_SCOPES = ["openid", "email", "https://www.googleapis.com/auth/drive.readonly"] as const;
export const DRIVE_SCOPE = "https://www.googleapis.com/auth/drive.readonly";

export function googleRedirectUri(): string {
  return `${getConfig().appUrl}/api/integrations/google/callback`;
}

/** Throws 503 `google_not_configured` unless GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET are set. */
export function assertGoogleConfigured(): void {
  if (!getConfig().google.configured) {
    throw new AppError(
      "google_not_configured",
      "Google integration is not configured on this server: set GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET.",
    );
  }
}

/**
 * The one place an OAuth2Client is built: endpoints come from the config so that tests (and self-hosters
 * behind a proxy) can point the real library at another server.
 */
export function createOAuthClient(refreshToken?: string): OAuth2Client {
  assertGoogleConfigured();
  const { google } = getConfig();
  const endpoints: Record<string, string> = {};
  if (google.authUrl) endpoints.oauth2AuthBaseUrl = google.authUrl;
  if (google.tokenUrl) endpoints.oauth2TokenUrl = google.tokenUrl;
  if (google.revokeUrl) endpoints.oauth2RevokeUrl = google.revokeUrl;
  const client = new OAuth2Client({
    clientId: google.clientId,
    clientSecret: google.clientSecret,
    redirectUri: googleRedirectUri(),
    endpoints,
  });
  if (refreshToken) client.setCredentials({ refresh_token: refreshToken });
  return client;
}

/** True when Google answered that the refresh token is no longer valid (revoked, expired, password change). */
export function isInvalidGrant(error: unknown): boolean {
  if (!error || typeof error !== "object") return false;
  const data = (error as { response?: { data?: unknown } }).response?.data;
  if (data && typeof data === "object" && (data as { error?: unknown }).error === "invalid_grant") return true;
  const message = (error as { message?: unknown }).message;
  return typeof message === "string" && (message === "invalid_grant" || message.includes('"invalid_grant"'));
}
