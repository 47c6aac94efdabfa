import "server-only";
import { AppError } from "@/lib/http/errors";

/**
 * Seam between the DATA_SOURCE node and Google Drive: downloads a CSV (or exports a Sheet as CSV) from the
 * account's linked Drive and parses it with the upload rules. Implemented by the Google integration (issue 6).
 */
export async function loadDriveFileRows(
  _accountId: string,
  _driveFileId: string,
): Promise<{ columns: string[]; rows: Record<string, string>[] }> {
  throw new AppError("google_not_configured", "Google Drive data sources are not available yet.");
}
