import Papa from "papaparse";
import { getConfig } from "@/lib/config";
import { AppError, type ErrorItem } from "@/lib/errors";

/** More columns than this is refused: nobody mails from a 500-column sheet, and the header stays cheap to check. */
export const CSV_MAX_COLUMNS = 500;
/**
 * The longest record (one line, or several when a quoted cell holds newlines). Bounds the text kept between
 * chunks, so a 50 MiB file with no line break is refused after 1 MiB instead of being rescanned on every chunk.
 */
export const CSV_MAX_RECORD_CHARS = 1024 * 1024;
/** Text gathered before the delimiter and line ending are guessed. */
const SAMPLE_CHARS = 64 * 1024;
const DELIMITERS = [",", ";", "\t"];

export type ParsedCsv = { columns: string[]; rows: string[][] };

/** The contract's `invalid_csv` problem, with the line both in the message and in `errors[0].line`. */
export function invalidCsv(message: string, line: number): AppError {
  const item: ErrorItem & { line: number } = { path: "file", code: "invalid_csv", message, line };
  return new AppError("invalid_csv", message, { errors: [item], extensions: { line } });
}

/**
 * Incremental CSV parser: feed decoded text with `write`, finish with `end`. Each returns the data rows that
 * became complete, already checked and padded to the header's width. The header is available as `columns`.
 * papaparse's low-level `Parser` does the tokenising in array mode (its header mode silently renames duplicate
 * names and hides extra cells, both of which we must reject).
 */
export class CsvStreamParser {
  columns: string[] | null = null;
  private pending = "";
  private parser: Papa.Parser | null = null;
  private newlineChar = "\n";
  /** Physical line on which the text in `pending` begins. */
  private line = 1;
  private dataRows = 0;

  /** `maxRows`: data rows allowed (UPLOAD_MAX_ROWS); one more fails at once, before it is stored or kept. */
  constructor(private readonly maxRows = Number.POSITIVE_INFINITY) {}

  write(text: string): string[][] {
    this.pending += text;
    if (!this.parser) {
      if (this.pending.length < SAMPLE_CHARS) return [];
      this.start();
    } else if (text.indexOf(this.newlineChar) === -1) {
      // No line ending arrived, so no record can have completed: skip the rescan (this keeps long lines linear).
      this.checkPendingLength();
      return [];
    }
    const rows = this.parse(false);
    this.checkPendingLength();
    return rows;
  }

  end(): string[][] {
    if (!this.parser) this.start();
    const rows = this.parse(true);
    if (!this.columns) {
      throw invalidCsv("The file is empty: line 1 must be a header naming the columns.", 1);
    }
    return rows;
  }

  private checkPendingLength(): void {
    if (this.pending.length > CSV_MAX_RECORD_CHARS) throw recordTooLong(this.line);
  }

  /** Guesses the line ending and the delimiter from the first chunk of text. */
  private start(): void {
    const newline = guessNewline(this.pending);
    this.newlineChar = newline === "\r" ? "\r" : "\n";
    const delimiter = guessDelimiter(this.pending);
    this.parser = new Papa.Parser({ delimiter, newline, quoteChar: '"' });
  }

  private parse(final: boolean): string[][] {
    const input = this.pending;
    const result = this.parser!.parse(input, 0, !final) as {
      data: string[][];
      errors: { row: number; message: string }[];
      meta: { cursor: number };
    };
    const { data } = result;
    const problems = new Map<number, string>();
    for (const error of result.errors) {
      // Without `final`, errors past the returned rows belong to the unfinished record parsed again later.
      if ((final || error.row < data.length) && !problems.has(error.row)) problems.set(error.row, error.message);
    }
    const quoted = input.indexOf('"') !== -1;
    const out: string[][] = [];
    for (let i = 0; i < data.length; i++) {
      const cells = data[i];
      const line = this.line;
      this.line += quoted ? linesSpanned(cells, this.newlineChar) : 1;
      if (problems.size > 0 && problems.has(i)) throw invalidCsv(`Line ${line}: ${quoteProblem(problems.get(i)!)}`, line);
      if (cells.length === 1 && cells[0].trim() === "") continue; // a fully empty line
      // A record that arrived whole in one chunk never sat in `pending`, so its length is checked here too.
      if (recordChars(cells) > CSV_MAX_RECORD_CHARS) throw recordTooLong(line);
      if (!this.columns) {
        this.columns = readHeader(cells, line);
        continue;
      }
      if (++this.dataRows > this.maxRows) throw tooManyRows(this.maxRows, line);
      out.push(fitRow(cells, this.columns.length, line));
    }
    this.pending = final ? "" : input.slice(result.meta.cursor);
    return out;
  }
}

function tooManyRows(maxRows: number, line: number): AppError {
  return invalidCsv(
    `The file has more than ${maxRows.toLocaleString("en-US")} data rows (the limit of this server, UPLOAD_MAX_ROWS): split it into smaller files.`,
    line,
  );
}

function recordTooLong(line: number): AppError {
  return invalidCsv(`Line ${line} is longer than ${CSV_MAX_RECORD_CHARS / 1024 / 1024} MiB: is this really a CSV file?`, line);
}

function recordChars(cells: string[]): number {
  let total = 0;
  for (const cell of cells) total += cell.length;
  return total;
}

function guessNewline(text: string): "\n" | "\r\n" | "\r" {
  const lf = text.indexOf("\n");
  const cr = text.indexOf("\r");
  if (cr === -1 || (lf !== -1 && lf < cr)) return "\n";
  return text[cr + 1] === "\n" ? "\r\n" : "\r";
}

/**
 * The delimiter is the candidate found most often, outside quotes, on the first non-empty line (the header).
 * papaparse's own guess wants equal cell counts on every sampled line, so short rows (valid here) fool it.
 */
function guessDelimiter(text: string): string {
  const counts = new Map<string, number>(DELIMITERS.map((d) => [d, 0]));
  let inQuotes = false;
  let seenContent = false;
  const end = Math.min(text.length, SAMPLE_CHARS);
  for (let i = 0; i < end; i++) {
    const ch = text[i];
    if (ch === '"') inQuotes = !inQuotes;
    else if (!inQuotes && (ch === "\n" || ch === "\r")) {
      if (seenContent) break;
    } else if (!inQuotes && counts.has(ch)) counts.set(ch, counts.get(ch)! + 1);
    if (ch.trim() !== "") seenContent = true;
  }
  let best = ",";
  for (const [delimiter, count] of counts) if (count > counts.get(best)!) best = delimiter;
  return best;
}

function linesSpanned(cells: string[], newlineChar: string): number {
  let lines = 1;
  for (const cell of cells) {
    for (let at = cell.indexOf(newlineChar); at !== -1; at = cell.indexOf(newlineChar, at + 1)) lines++;
  }
  return lines;
}

function quoteProblem(message: string): string {
  if (/unterminated/i.test(message)) return "a quoted cell is never closed (missing closing quote).";
  if (/malformed/i.test(message)) return 'a quoted cell has text after its closing quote (write a quote inside quotes as "").';
  return message;
}

function readHeader(cells: string[], line: number): string[] {
  if (cells.length > CSV_MAX_COLUMNS) {
    throw invalidCsv(`Line ${line}: the header has ${cells.length} columns; at most ${CSV_MAX_COLUMNS} are allowed (too many columns).`, line);
  }
  const seen = new Set<string>();
  return cells.map((cell, index) => {
    const name = cell.trim();
    if (name === "") throw invalidCsv(`Line ${line}: column ${index + 1} of the header has no name.`, line);
    if (seen.has(name)) throw invalidCsv(`Line ${line}: the header names the column "${name}" twice.`, line);
    seen.add(name);
    return name;
  });
}

function fitRow(cells: string[], width: number, line: number): string[] {
  if (cells.length > width) {
    throw invalidCsv(`Line ${line} has ${cells.length} cells but the header names only ${width} columns.`, line);
  }
  while (cells.length < width) cells.push("");
  return cells;
}

/** Parses a whole CSV text by the upload rules (used for Drive files, which arrive as one string). */
export function parseCsvText(text: string): ParsedCsv {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const nul = body.indexOf("\0");
  if (nul !== -1) throw binaryData(lineAt(body, nul));
  const parser = new CsvStreamParser();
  const rows = parser.write(body);
  for (const row of parser.end()) rows.push(row);
  return { columns: parser.columns!, rows };
}

function lineAt(text: string, index: number): number {
  let line = 1;
  for (let at = text.indexOf("\n"); at !== -1 && at < index; at = text.indexOf("\n", at + 1)) line++;
  return line;
}

function binaryData(line: number): AppError {
  return invalidCsv(`Line ${line} contains a NUL byte: this looks like a binary file, not a CSV text file.`, line);
}

/**
 * Streaming UTF-8 decoding that refuses invalid bytes and NUL characters with the line they are on.
 * The BOM is dropped by TextDecoder itself.
 */
export class CsvTextDecoder {
  private decoder = new TextDecoder("utf-8", { fatal: true });
  private lines = 1;

  decode(bytes: Uint8Array, final = false): string {
    let text: string;
    try {
      text = this.decoder.decode(bytes, { stream: !final });
    } catch {
      const lossy = new TextDecoder("utf-8").decode(bytes);
      const bad = lossy.indexOf("\uFFFD");
      const line = this.lines + (bad === -1 ? 0 : lineAt(lossy, bad) - 1);
      throw invalidCsv(`Line ${line} is not valid UTF-8 text: save the file as CSV UTF-8, or is this a binary file?`, line);
    }
    const nul = text.indexOf("\0");
    if (nul !== -1) throw binaryData(this.lines + lineAt(text, nul) - 1);
    for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) this.lines++;
    return text;
  }
}

/**
 * Parses a byte stream, handing rows to `onRows` in batches of `batchRows` (awaited, so a slow consumer slows the
 * reading). Never holds more than one batch and one record of text. Every upload path (multipart, tus, Drive) comes
 * through here, so all of them stop at UPLOAD_MAX_ROWS with the same 422.
 */
export async function parseCsvStream(
  source: AsyncIterable<Uint8Array>,
  onRows: (rows: string[][], columns: string[]) => Promise<void>,
  batchRows = 5000,
  maxRows = getConfig().uploadMaxRows,
): Promise<{ columns: string[]; rowCount: number }> {
  const decoder = new CsvTextDecoder();
  const parser = new CsvStreamParser(maxRows);
  let batch: string[][] = [];
  let rowCount = 0;
  const take = async (rows: string[][]) => {
    for (const row of rows) {
      batch.push(row);
      if (batch.length >= batchRows) await flush();
    }
  };
  const flush = async () => {
    if (batch.length === 0) return;
    const rows = batch;
    batch = [];
    rowCount += rows.length;
    await onRows(rows, parser.columns!);
  };
  for await (const chunk of source) await take(parser.write(decoder.decode(chunk)));
  await take(parser.write(decoder.decode(new Uint8Array(0), true)));
  await take(parser.end());
  await flush();
  return { columns: parser.columns!, rowCount };
}
