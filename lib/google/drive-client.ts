import "server-only";
import { drive, type drive_v3 } from "@googleapis/drive";
import { getConfig } from "@/lib/config";
import { AppError } from "@/lib/errors";
import { log } from "@/lib/log";
import {
  findGoogleLink,
  LINK_EXPIRED_MESSAGE,
  linkRefreshToken,
  markGoogleLinkBroken,
  NOT_CONNECTED_MESSAGE,
  replaceRefreshToken,
} from "./links";
import { assertGoogleConfigured, createOAuthClient, isInvalidGrant } from "./oauth-client";

export const SHEET_MIME_TYPE = "application/vnd.google-apps.spreadsheet";
export const CSV_MIME_TYPE = "text/csv";

export type AccountDrive = { accountId: string; drive: drive_v3.Drive };

/**
 * A Drive client acting for the account, authorised by its stored refresh token (the library fetches and
 * renews the access token itself). A missing or broken link fails here, before any call to Google.
 */
export async function driveForAccount(accountId: string): Promise<AccountDrive> {
  assertGoogleConfigured();
  const link = await findGoogleLink(accountId);
  if (!link) throw new AppError("google_not_connected", NOT_CONNECTED_MESSAGE);
  if (link.status === "broken") throw new AppError("google_not_connected", LINK_EXPIRED_MESSAGE);
  const refreshToken = linkRefreshToken(link);
  const auth = createOAuthClient(refreshToken);
  auth.on("tokens", (tokens) => {
    if (tokens.refresh_token && tokens.refresh_token !== refreshToken) {
      replaceRefreshToken(accountId, tokens.refresh_token).catch((error) =>
        log.warn("could not store rotated google refresh token", { accountId, error }),
      );
    }
  });
  const rootUrl = getConfig().google.apiRootUrl;
  return { accountId, drive: drive({ version: "v3", auth, ...(rootUrl ? { rootUrl: withSlash(rootUrl) } : {}) }) };
}

function withSlash(url: string): string {
  return url.endsWith("/") ? url : `${url}/`;
}

/**
 * Runs one Drive call and turns Google's failures into sentences: invalid_grant marks the link broken (so
 * later calls fail at once instead of hammering Google) and gives the "reconnect" message.
 */
export async function callDrive<T>(accountId: string, what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw await translateDriveError(accountId, what, error);
  }
}

async function translateDriveError(accountId: string, what: string, error: unknown): Promise<Error> {
  if (error instanceof AppError) return error;
  if (isInvalidGrant(error)) {
    await markGoogleLinkBroken(accountId);
    return new AppError("google_not_connected", LINK_EXPIRED_MESSAGE);
  }
  const status = (error as { status?: number; response?: { status?: number } }).response?.status;
  if (status === 404) return new AppError("not_found", `${what} was not found on the linked Google Drive`);
  if (status === 401 || status === 403) {
    return new AppError("google_not_connected", `Google Drive refused access to ${what}: reconnect Google in Settings`);
  }
  log.warn("google drive call failed", { accountId, what, status, error });
  return new AppError("service_unavailable", `Google Drive did not answer for ${what}${status ? ` (HTTP ${status})` : ""}: try again later`);
}
