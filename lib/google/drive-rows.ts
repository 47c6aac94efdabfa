import "server-only";
import type { Readable } from "node:stream";
import { cellsToRow } from "@/db/queries/upload-rows";
import { getConfig } from "@/lib/config";
import { parseCsvStream } from "@/lib/csv/parse-csv";
import { AppError } from "@/lib/errors";
import { formatBytes } from "@/lib/http/route";
import { callDrive, CSV_MIME_TYPE, driveForAccount, SHEET_MIME_TYPE, type AccountDrive } from "./drive-client";

type DriveFileMeta = { id: string; name: string; mimeType: string; size: number | null };

/**
 * Seam between the DATA_SOURCE node and Google Drive: downloads a CSV (or exports a Sheet as CSV) from the
 * account's linked Drive and parses it with the upload rules and size limit. Errors are AppErrors whose
 * message is the node's error sentence ("Google account link expired: reconnect it", …).
 */
export async function loadDriveFileRows(
  accountId: string,
  driveFileId: string,
): Promise<{ columns: string[]; rows: Record<string, string>[] }> {
  const account = await driveForAccount(accountId);
  const meta = await fileMetadata(account, driveFileId);
  const maxBytes = getConfig().uploadMaxBytes;
  if (meta.size !== null && meta.size > maxBytes) throw tooLarge(meta, maxBytes);
  const body = await downloadAsCsv(account, meta);
  const rows: Record<string, string>[] = [];
  try {
    const { columns } = await parseCsvStream(capped(body, meta, maxBytes), async (batch, header) => {
      for (const cells of batch) rows.push(cellsToRow(header, cells));
    });
    return { columns, rows };
  } catch (error) {
    body.destroy();
    if (error instanceof AppError && error.code === "invalid_csv") {
      throw new AppError("invalid_csv", `Drive file "${meta.name}" is not a valid CSV: ${error.message}`, {
        errors: error.errors,
        extensions: error.extensions,
      });
    }
    if (error instanceof AppError) throw error;
    throw new AppError("service_unavailable", `The download of Drive file "${meta.name}" broke off: try again`, {
      cause: error,
    });
  }
}

async function fileMetadata({ accountId, drive }: AccountDrive, fileId: string): Promise<DriveFileMeta> {
  const res = await callDrive(accountId, `Drive file ${fileId}`, () =>
    drive.files.get({ fileId, fields: "id,name,mimeType,size", supportsAllDrives: true }),
  );
  const { id, name, mimeType, size } = res.data;
  return { id: id ?? fileId, name: name ?? fileId, mimeType: mimeType ?? "", size: size ? Number(size) : null };
}

function isCsvFile(meta: DriveFileMeta): boolean {
  return meta.mimeType === CSV_MIME_TYPE || meta.name.toLowerCase().endsWith(".csv");
}

/** A Sheet is exported as CSV (its first sheet, as Google does); a CSV file is downloaded as it is. */
async function downloadAsCsv({ accountId, drive }: AccountDrive, meta: DriveFileMeta): Promise<Readable> {
  const what = `Drive file "${meta.name}"`;
  if (meta.mimeType === SHEET_MIME_TYPE) {
    const res = await callDrive(accountId, what, () =>
      drive.files.export({ fileId: meta.id, mimeType: CSV_MIME_TYPE }, { responseType: "stream" }),
    );
    return res.data as unknown as Readable;
  }
  if (isCsvFile(meta)) {
    const res = await callDrive(accountId, what, () =>
      drive.files.get({ fileId: meta.id, alt: "media", supportsAllDrives: true }, { responseType: "stream" }),
    );
    return res.data as unknown as Readable;
  }
  throw new AppError(
    "validation_failed",
    `${what} is ${meta.mimeType || "of an unknown type"}, not a CSV file or a Google Sheet`,
  );
}

/** Passes the download through while counting bytes; past the limit the download is stopped. */
async function* capped(body: Readable, meta: DriveFileMeta, maxBytes: number): AsyncGenerator<Uint8Array> {
  let total = 0;
  for await (const chunk of body as AsyncIterable<Uint8Array | string>) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    total += bytes.byteLength;
    if (total > maxBytes) {
      body.destroy();
      throw tooLarge(meta, maxBytes);
    }
    yield bytes;
  }
}

function tooLarge(meta: DriveFileMeta, maxBytes: number): AppError {
  return new AppError("payload_too_large", `Drive file "${meta.name}" is larger than ${formatBytes(maxBytes)}`);
}
