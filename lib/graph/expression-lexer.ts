// Tokens of the expression language, read on demand by the parser.
import { ExpressionSyntaxError } from "./expression-errors";

export type TokenKind = "number" | "string" | "name" | "op" | "end";
export type Token = { kind: TokenKind; value: string; literal?: number | string; position: number };

const OPERATORS = ["===", "!==", "==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "+", "-", "*", "/", "%", "(", ")", "[", "]", ",", "."];

const NUMBER_PATTERN = /(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y;
const NAME_PATTERN = /[A-Za-z_][A-Za-z0-9_]*/y;

function stickyMatch(pattern: RegExp, source: string, at: number): string {
  pattern.lastIndex = at;
  return pattern.exec(source)![0];
}

/** Reads tokens on demand, so the first problem from the left is the one reported. */
export class Lexer {
  private readonly tokens: Token[] = [];
  private offset = 0;

  constructor(private readonly source: string) {}

  at(index: number): Token {
    while (this.tokens.length <= index && this.tokens[this.tokens.length - 1]?.kind !== "end") this.tokens.push(this.read());
    return this.tokens[Math.min(index, this.tokens.length - 1)];
  }

  private read(): Token {
    const source = this.source;
    while (this.offset < source.length && /\s/.test(source[this.offset])) this.offset++;
    const i = this.offset;
    if (i >= source.length) return { kind: "end", value: "", position: source.length };
    const char = source[i];
    if (/[0-9]/.test(char) || (char === "." && /[0-9]/.test(source[i + 1] ?? ""))) {
      const text = stickyMatch(NUMBER_PATTERN, source, i);
      if (/[A-Za-z_]/.test(source[i + text.length] ?? "")) unexpected(source, i + text.length);
      this.offset += text.length;
      return { kind: "number", value: text, literal: Number(text), position: i };
    }
    if (char === '"' || char === "'") {
      const { value, end } = readString(source, i);
      this.offset = end;
      return { kind: "string", value: source.slice(i, end), literal: value, position: i };
    }
    if (/[A-Za-z_]/.test(char)) {
      const name = stickyMatch(NAME_PATTERN, source, i);
      this.offset += name.length;
      return { kind: "name", value: name, position: i };
    }
    const op = OPERATORS.find((candidate) => source.startsWith(candidate, i));
    if (!op) {
      const hint = char === "=" ? ' (use "==" to compare)' : "";
      throw new ExpressionSyntaxError(`Unexpected "${char}" at position ${i}${hint}`, i);
    }
    this.offset += op.length;
    return { kind: "op", value: op === "===" ? "==" : op === "!==" ? "!=" : op, position: i };
  }
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0" };

function readString(source: string, start: number): { value: string; end: number } {
  const quote = source[start];
  let value = "";
  let i = start + 1;
  while (i < source.length) {
    const char = source[i];
    if (char === quote) return { value, end: i + 1 };
    if (char === "\\") {
      const next = source[i + 1];
      if (next === "u" && /^[0-9a-fA-F]{4}$/.test(source.slice(i + 2, i + 6))) {
        value += String.fromCharCode(parseInt(source.slice(i + 2, i + 6), 16));
        i += 6;
        continue;
      }
      if (next === undefined || !(next in ESCAPES)) {
        throw new ExpressionSyntaxError(`Unknown escape "\\${next ?? ""}" at position ${i}`, i);
      }
      value += ESCAPES[next];
      i += 2;
      continue;
    }
    value += char;
    i++;
  }
  throw new ExpressionSyntaxError(`Unterminated string starting at position ${start}`, start);
}

export function unexpected(source: string, position: number): never {
  if (position >= source.length) {
    throw new ExpressionSyntaxError(`Unexpected end of expression at position ${position}`, position);
  }
  throw new ExpressionSyntaxError(`Unexpected "${source[position]}" at position ${position}`, position);
}
