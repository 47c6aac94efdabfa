import "server-only";
import { callDrive, CSV_MIME_TYPE, driveForAccount, SHEET_MIME_TYPE } from "./drive-client";

export type DriveFileItem = { id: string; name: string; mimeType: string; modifiedTime: string | null };

/** Drive's query language quotes strings with '…' and escapes \ and '. */
function quote(value: string): string {
  return `'${value.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

export function driveFilesQuery(search?: string): string {
  const parts = [`(mimeType = ${quote(CSV_MIME_TYPE)} or mimeType = ${quote(SHEET_MIME_TYPE)})`, "trashed = false"];
  if (search && search.trim()) parts.push(`name contains ${quote(search.trim())}`);
  return parts.join(" and ");
}

/** CSV files and Google Sheets of the linked Drive for the editor's picker, newest first (first 100). */
export async function listDriveFiles(accountId: string, search?: string): Promise<{ items: DriveFileItem[] }> {
  const { drive } = await driveForAccount(accountId);
  const res = await callDrive(accountId, "the file list", () =>
    drive.files.list({
      q: driveFilesQuery(search),
      fields: "files(id,name,mimeType,modifiedTime)",
      orderBy: "modifiedTime desc",
      pageSize: 100,
      spaces: "drive",
      supportsAllDrives: true,
      includeItemsFromAllDrives: true,
    }),
  );
  const items = (res.data.files ?? []).map((f) => ({
    id: f.id ?? "",
    name: f.name ?? "",
    mimeType: f.mimeType ?? "",
    modifiedTime: f.modifiedTime ?? null,
  }));
  return { items: items.filter((f) => f.id) };
}
