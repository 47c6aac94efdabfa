import { AppError } from "@/lib/errors";

/** Media types browsers and tools send for a .csv file (Windows with Excel installed says application/vnd.ms-excel). */
const CSV_TYPES = new Set(["text/csv", "application/csv", "text/x-csv", "application/x-csv", "text/comma-separated-values", "application/vnd.ms-excel"]);
/** What a client sends when it knows nothing better (curl -F file=@rows, a pipe): judged by the parse. */
const UNKNOWN_TYPES = new Set(["", "application/octet-stream", "text/plain", "binary/octet-stream"]);

/**
 * Uploads take CSV files only, judged before a byte is read (a .txt, .xlsx or .json would otherwise be parsed as CSV
 * and land as a one-column table of text):
 * - a name ending in `.csv` (any case) is accepted, whatever type the client declares;
 * - a name with another extension (`notes.txt`, `people.xlsx`) is refused, whatever the type;
 * - a name without an extension (or none at all) is accepted with a CSV type or no telling type (octet-stream,
 *   text/plain, none), and refused with any other type (`image/png`).
 * Refused: 415 `unsupported_media_type`, naming the file. A file that passes is still parsed under the CSV rules
 * (invalid UTF-8, a bad header… → 422 `invalid_csv`).
 */
export function assertCsvFile(filename: string, mimeType: string | undefined): void {
  const name = filename.split(/[\\/]/).pop()?.trim() ?? "";
  const type = (mimeType ?? "").split(";")[0].trim().toLowerCase();
  const dot = name.lastIndexOf(".");
  const extension = dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
  if (extension === "csv") return;
  if (extension === "" && (CSV_TYPES.has(type) || UNKNOWN_TYPES.has(type))) return;
  const shown = name ? `"${Array.from(name).slice(0, 120).join("")}"` : "The file";
  // The extension in quotes: a message shown to people must not read "ends in .txt" as the end of a sentence.
  const why = extension ? `its name ends in ".${Array.from(extension).slice(0, 20).join("")}"` : `it was sent as ${type}`;
  throw new AppError("unsupported_media_type", `${shown} is not a CSV file (${why}): upload a file whose name ends in ".csv", such as a spreadsheet saved or exported as CSV.`);
}
