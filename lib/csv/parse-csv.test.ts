import Papa from "papaparse";
import { describe, expect, it, vi } from "vitest";
import { AppError } from "@/lib/errors";
import { CSV_MAX_COLUMNS, parseCsvStream, parseCsvText } from "./parse-csv";

function csvError(fn: () => unknown): { message: string; line: number } {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    const appError = error as AppError;
    expect(appError.code).toBe("invalid_csv");
    const item = appError.errors![0] as { path: string; code: string; message: string; line: number };
    expect(item.path).toBe("file");
    expect(item.code).toBe("invalid_csv");
    expect(appError.extensions?.line).toBe(item.line);
    return { message: appError.message, line: item.line };
  }
  throw new Error("expected invalid_csv");
}

async function* chunked(bytes: Uint8Array, size: number) {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

/**
 * Counts the parser's work while `body` runs, never the clock: the passes of papaparse over the text, the characters
 * they were handed (a rescan of text already parsed counts again), and the reads of the cells of the rows it returned.
 */
async function countingPapa<T>(body: () => T | Promise<T>): Promise<{ passes: number; chars: number; cellReads: number }> {
  const counts = { passes: 0, chars: 0, cellReads: 0 };
  const countReads = (row: string[]) =>
    new Proxy(row, {
      get(target, key, receiver) {
        if (typeof key === "string" && /^\d+$/.test(key)) counts.cellReads++;
        return Reflect.get(target, key, receiver);
      },
    });
  const Original = Papa.Parser;
  const spy = vi.spyOn(Papa, "Parser").mockImplementation(function (config) {
    const parser = new Original(config);
    const parse = parser.parse.bind(parser);
    parser.parse = (input: string, baseIndex: number, ignoreLastRow: boolean) => {
      counts.passes++;
      counts.chars += input.length;
      const result = parse(input, baseIndex, ignoreLastRow) as { data: string[][] };
      result.data = result.data.map(countReads);
      return result;
    };
    return parser;
  });
  try {
    await body();
  } finally {
    spy.mockRestore();
  }
  return counts;
}

async function parseBytes(bytes: Uint8Array, chunkSize = 7, batchRows = 3) {
  const rows: string[][] = [];
  const batches: number[] = [];
  const result = await parseCsvStream(chunked(bytes, chunkSize), async (batch) => {
    batches.push(batch.length);
    rows.push(...batch);
  }, batchRows);
  return { ...result, rows, batches };
}

describe("parseCsvText", () => {
  it("reads the header, trims names, keeps every cell a string", () => {
    expect(parseCsvText(" name , age\nAda,36\nBob, 7 \n")).toEqual({
      columns: ["name", "age"],
      rows: [["Ada", "36"], ["Bob", " 7 "]],
    });
  });

  it("drops a BOM, detects semicolons and tabs, handles CRLF", () => {
    expect(parseCsvText("\uFEFFa;b\r\n1;2\r\n")).toEqual({ columns: ["a", "b"], rows: [["1", "2"]] });
    expect(parseCsvText("a\tb\n1\t2")).toEqual({ columns: ["a", "b"], rows: [["1", "2"]] });
    // the header decides, even when later rows are short or hold other candidates inside quotes
    expect(parseCsvText('\n"x,y";b;c\n1\n"2,3";4\n')).toEqual({ columns: ["x,y", "b", "c"], rows: [["1", "", ""], ["2,3", "4", ""]] });
  });

  it("keeps delimiters, quotes and newlines inside quoted cells", () => {
    const parsed = parseCsvText('a,b\n"x, y","line1\nline2"\n"say ""hi""",z\n');
    expect(parsed.rows).toEqual([["x, y", "line1\nline2"], ['say "hi"', "z"]]);
  });

  it("skips fully empty lines, pads short rows, keeps formula-like cells as data", () => {
    expect(parseCsvText("a,b,c\n\n1\n\n=SUM(A1),+1,@x\n").rows).toEqual([
      ["1", "", ""],
      ["=SUM(A1)", "+1", "@x"],
    ]);
  });

  it("accepts a header with no rows", () => {
    expect(parseCsvText("a,b\n")).toEqual({ columns: ["a", "b"], rows: [] });
  });

  it("treats __proto__ and constructor as plain column names", () => {
    expect(parseCsvText("__proto__,constructor\n1,2").columns).toEqual(["__proto__", "constructor"]);
  });

  it("refuses an empty file, empty or duplicate names, extra cells, with the line", () => {
    expect(csvError(() => parseCsvText("")).line).toBe(1);
    expect(csvError(() => parseCsvText("\n\n")).message).toMatch(/empty/);
    expect(csvError(() => parseCsvText("a,,c\n1,2,3"))).toMatchObject({ line: 1, message: expect.stringMatching(/column 2/) });
    expect(csvError(() => parseCsvText("\na, a\n1,2"))).toMatchObject({ line: 2, message: expect.stringMatching(/"a" twice/) });
    expect(csvError(() => parseCsvText('a,b\n"1\n2",3\n4,5,6\n'))).toMatchObject({ line: 4, message: expect.stringMatching(/3 cells/) });
  });

  it("refuses an unterminated quote with its line", () => {
    expect(csvError(() => parseCsvText('a,b\n1,2\n"open,3\n'))).toMatchObject({ line: 3, message: expect.stringMatching(/never closed/) });
  });

  it("refuses too many columns quickly, even 100,000", async () => {
    expect(csvError(() => parseCsvText(Array.from({ length: CSV_MAX_COLUMNS + 1 }, (_, i) => `c${i}`).join(","))).message).toMatch(
      /too many columns/,
    );
    const wide = Array.from({ length: 100_000 }, (_, i) => `c${i}`).join(",") + "\n";
    // One pass over the text, and each cell read about once (its length counted) before the header is refused: no
    // per-name work (trimming, the duplicate check) on 100,000 names.
    const work = await countingPapa(() => expect(csvError(() => parseCsvText(wide)).message).toMatch(/too many columns/));
    expect(work.passes).toBe(1);
    expect(work.chars).toBe(wide.length);
    expect(work.cellReads).toBeGreaterThan(0);
    expect(work.cellReads).toBeLessThanOrEqual(100_000);
  });

  it("refuses NUL bytes", () => {
    expect(csvError(() => parseCsvText("a\nb\0"))).toMatchObject({ line: 2, message: expect.stringMatching(/NUL/) });
  });
});

describe("parseCsvStream", () => {
  const encode = (text: string) => new TextEncoder().encode(text);

  it("gives the same rows in batches however the bytes are split", async () => {
    const text = 'h1,h2\n"a\nb",é\n\n1,2\n3\n4,"5,5"\n6,7\n';
    for (const size of [1, 2, 5, 64]) {
      const result = await parseBytes(encode(text), size);
      expect(result.columns).toEqual(["h1", "h2"]);
      expect(result.rows).toEqual([["a\nb", "é"], ["1", "2"], ["3", ""], ["4", "5,5"], ["6", "7"]]);
      expect(result.rowCount).toBe(5);
      expect(Math.max(...result.batches)).toBeLessThanOrEqual(3);
    }
  });

  it("counts lines across quoted newlines for errors", async () => {
    await expect(parseBytes(encode('a,b\n"x\ny",1\n\n2,3,4\n'), 3)).rejects.toMatchObject({
      code: "invalid_csv",
      extensions: { line: 5 },
    });
  });

  it("refuses invalid UTF-8 with its line, and a PNG", async () => {
    const bytes = new Uint8Array([...encode("a,b\n1,2\n3,"), 0xff, 0xfe, ...encode("\n")]);
    await expect(parseBytes(bytes, 64)).rejects.toMatchObject({ code: "invalid_csv", extensions: { line: 3 } });
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
    await expect(parseBytes(png)).rejects.toMatchObject({ code: "invalid_csv", extensions: { line: 1 } });
  });

  it("refuses a 50 MiB line after reading little more than 1 MiB", async () => {
    let bytesRead = 0;
    const chunk = new Uint8Array(64 * 1024).fill(0x61);
    async function* endless() {
      for (let i = 0; i < 800; i++) {
        bytesRead += chunk.length;
        yield chunk;
      }
    }
    const work = await countingPapa(() =>
      expect(parseCsvStream(endless(), async () => {})).rejects.toMatchObject({
        code: "invalid_csv",
        message: expect.stringMatching(/Line 1 is longer than 1 MiB/),
      }),
    );
    expect(bytesRead).toBeLessThan(2 * 1024 * 1024);
    // Chunks without a line ending are not parsed again and again (1 + 2 + … + 17 chunks, ~9 MiB, if they were).
    expect(work.passes).toBeGreaterThan(0);
    expect(work.chars).toBeLessThan(2 * 1024 * 1024);
  });
});
