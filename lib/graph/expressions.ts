// The expression language of FILTER `expr` and edge `condition` (CONTRACT.md section 4, "Expressions").
// A hand-written tokenizer and recursive-descent parser build an AST once; the AST is compiled to closures, so
// evaluating a row is a few function calls. Nothing here uses eval, Function or vm, and no lookup can leave the
// data: every field read is an own-property read, and only the helper functions below can be called.
//
// Grammar, loosest first:
//   or      := and (("||" | "or") and)*
//   and     := not (("&&" | "and") not)*
//   not     := "not" not | compare                 (Python's `not`: `not a == b` is `not (a == b)`)
//   compare := sum (("==" | "!=" | "<" | "<=" | ">" | ">=" | "in" | "not in") sum)?   (no chaining: `a < b < c` is an error)
//   sum     := product (("+" | "-") product)*
//   product := unary (("*" | "/" | "%") unary)*
//   unary   := ("!" | "-" | "+") unary | postfix     (JavaScript's `!`: `!a == b` is `(!a) == b`)
//   postfix := primary ("." name | "[" or "]" | "." helper "(" args ")")*
//   primary := number | string | true | false | null | name | helper "(" args ")" | "[" list "]" | "(" or ")"
// `===` and `!==` are accepted as `==` and `!=`.
//
// Names (decisions where the contract is silent):
// - `item` is the current element (FILTER only).
// - A name followed by `.` or `[` is an upstream node's output when a node with that id succeeded upstream,
//   otherwise a field of the item. A bare name is a field of the item first, then a node's whole output.
//   So node ids win only when followed by `.`; `item.<field>` always reaches the item.
// - A name that is neither is an ExpressionError (a typo must not silently filter out every row); a field that
//   exists with "" is fine. A missing nested field (`ai.sumary`) is an error too; an index past the end is null.
// - JavaScript words that could reach something (`with`, `Function`, `this`, `import`, `constructor`,
//   `__proto__`, `prototype`, `new`, `eval`, …) are syntax errors wherever a name is expected.
//
// Values: comparisons follow the contract — a number and a numeric string compare as numbers, a number and a
// non-numeric string are never equal or ordered (`!=` is true), two numeric strings are ordered numerically.
// "true"/"false" strings equal the booleans (CSV cells are strings). `+` adds numbers (and numeric strings
// with a number), otherwise concatenates when a string is involved. `- * / %` need numbers; division by zero
// is an error. `in` tests membership in a list, a substring in a string, or an own key in an object.
// Truthiness: false, null, 0, NaN, "", "false", "0" and empty lists are false; everything else true.

export class ExpressionSyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
    this.name = "ExpressionSyntaxError";
  }
}

/** A run-time failure (unknown name, wrong type…); the message is a sentence a person can act on. */
export class ExpressionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ExpressionError";
  }
}

/** `nodes`: outputs of upstream nodes that SUCCEEDED, by node id. */
export type ExpressionScope = { item?: unknown; nodes: Record<string, Record<string, unknown>> };

/** A root name used by an expression: `member` when followed by `.` or `[` (so it may name a node). */
export type ExpressionReference = { name: string; member: boolean; position: number };

export interface CompiledExpression {
  source: string;
  evaluate(scope: ExpressionScope): unknown;
  /** Free root identifiers, each once, in order of first use. */
  names(): string[];
  /** Every use of a root name with its position, for save-time checks. */
  references(): ExpressionReference[];
}

export const EXPRESSION_HELPERS = ["contains", "startsWith", "endsWith", "lower", "upper", "len"] as const;

export const RESERVED_WORDS: readonly string[] = [
  "with", "Function", "this", "import", "constructor", "__proto__", "prototype", "new", "eval", "function",
  "return", "var", "let", "const", "class", "delete", "typeof", "instanceof", "void", "yield", "await",
  "globalThis", "window", "global", "process", "require", "module", "arguments", "super", "async", "export",
];

const MAX_SOURCE_LENGTH = 10_000;
const MAX_DEPTH = 64;

// ───────────────────────────── tokens ─────────────────────────────

type TokenKind = "number" | "string" | "name" | "op" | "end";
type Token = { kind: TokenKind; value: string; literal?: number | string; position: number };

const OPERATORS = ["===", "!==", "==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "+", "-", "*", "/", "%", "(", ")", "[", "]", ",", "."];

const NUMBER_PATTERN = /(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y;
const NAME_PATTERN = /[A-Za-z_][A-Za-z0-9_]*/y;

function stickyMatch(pattern: RegExp, source: string, at: number): string {
  pattern.lastIndex = at;
  return pattern.exec(source)![0];
}

/** Reads tokens on demand, so the first problem from the left is the one reported. */
class Lexer {
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

function unexpected(source: string, position: number): never {
  if (position >= source.length) {
    throw new ExpressionSyntaxError(`Unexpected end of expression at position ${position}`, position);
  }
  throw new ExpressionSyntaxError(`Unexpected "${source[position]}" at position ${position}`, position);
}

// ───────────────────────────── AST ─────────────────────────────

type Node =
  | { type: "literal"; value: unknown }
  | { type: "list"; items: Node[] }
  | { type: "name"; name: string; member: boolean; position: number }
  | { type: "member"; object: Node; key: string }
  | { type: "index"; object: Node; index: Node }
  | { type: "call"; helper: Helper; args: Node[] }
  | { type: "unary"; op: "!" | "-" | "+"; operand: Node }
  | { type: "binary"; op: string; left: Node; right: Node };

type Helper = (typeof EXPRESSION_HELPERS)[number];
const HELPER_ARITY: Record<Helper, number> = { contains: 2, startsWith: 2, endsWith: 2, lower: 1, upper: 1, len: 1 };

class Parser {
  private index = 0;
  private depth = 0;
  readonly references: ExpressionReference[] = [];

  constructor(
    private readonly source: string,
    private readonly lexer: Lexer,
  ) {}

  parse(): Node {
    const node = this.or();
    if (this.peek().kind !== "end") this.fail(this.peek());
    return node;
  }

  private peek(offset = 0): Token {
    return this.lexer.at(this.index + offset);
  }

  private next(): Token {
    return this.lexer.at(this.index++);
  }

  private isOp(value: string, offset = 0): boolean {
    const token = this.peek(offset);
    return token.kind === "op" && token.value === value;
  }

  private isWord(value: string, offset = 0): boolean {
    const token = this.peek(offset);
    return token.kind === "name" && token.value === value;
  }

  private expectOp(value: string): void {
    if (!this.isOp(value)) this.fail(this.peek());
    this.index++;
  }

  private fail(token: Token): never {
    unexpected(this.source, token.position);
  }

  private nested<T>(parse: () => T): T {
    if (++this.depth > MAX_DEPTH) {
      throw new ExpressionSyntaxError(`Expression is nested too deeply at position ${this.peek().position}`, this.peek().position);
    }
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }

  private or(): Node {
    return this.nested(() => {
      let left = this.and();
      while (this.isOp("||") || this.isWord("or")) {
        this.index++;
        left = { type: "binary", op: "||", left, right: this.and() };
      }
      return left;
    });
  }

  private and(): Node {
    let left = this.not();
    while (this.isOp("&&") || this.isWord("and")) {
      this.index++;
      left = { type: "binary", op: "&&", left, right: this.not() };
    }
    return left;
  }

  private not(): Node {
    if (this.isWord("not")) {
      this.index++;
      return this.nested(() => ({ type: "unary", op: "!", operand: this.not() }));
    }
    return this.compare();
  }

  private compare(): Node {
    const left = this.sum();
    const op = this.compareOp();
    if (!op) return left;
    const node: Node = { type: "binary", op, left, right: this.sum() };
    if (this.compareOp(true)) {
      const token = this.peek();
      throw new ExpressionSyntaxError(
        `Unexpected "${token.value}" at position ${token.position}: comparisons cannot be chained, join them with &&`,
        token.position,
      );
    }
    return node;
  }

  /** Consumes a comparison operator and returns it (`not in` as "notin"); with `peekOnly` consumes nothing. */
  private compareOp(peekOnly = false): string | undefined {
    const token = this.peek();
    let op: string | undefined;
    let width = 1;
    if (token.kind === "op" && ["==", "!=", "<", "<=", ">", ">="].includes(token.value)) op = token.value;
    else if (this.isWord("in")) op = "in";
    else if (this.isWord("not") && this.isWord("in", 1)) [op, width] = ["notin", 2];
    if (op && !peekOnly) this.index += width;
    return op;
  }

  private sum(): Node {
    let left = this.product();
    while (this.isOp("+") || this.isOp("-")) {
      const op = this.next().value;
      left = { type: "binary", op, left, right: this.product() };
    }
    return left;
  }

  private product(): Node {
    let left = this.unary();
    while (this.isOp("*") || this.isOp("/") || this.isOp("%")) {
      const op = this.next().value;
      left = { type: "binary", op, left, right: this.unary() };
    }
    return left;
  }

  private unary(): Node {
    if (this.isOp("!") || this.isOp("-") || this.isOp("+")) {
      const op = this.next().value as "!" | "-" | "+";
      return this.nested(() => ({ type: "unary", op, operand: this.unary() }));
    }
    return this.postfix();
  }

  private postfix(): Node {
    let node = this.primary();
    for (;;) {
      if (this.isOp(".")) {
        this.index++;
        const token = this.next();
        if (token.kind !== "name") this.fail(token);
        this.checkNotReserved(token);
        if (this.isOp("(")) node = this.call(token, [node]);
        else node = { type: "member", object: node, key: token.value };
      } else if (this.isOp("[")) {
        this.index++;
        const index = this.or();
        this.expectOp("]");
        node = { type: "index", object: node, index };
      } else if (this.isOp("(")) {
        const token = this.peek();
        throw new ExpressionSyntaxError(
          `Unexpected "(" at position ${token.position}: only ${EXPRESSION_HELPERS.join(", ")} can be called`,
          token.position,
        );
      } else {
        return node;
      }
    }
  }

  private primary(): Node {
    const token = this.next();
    switch (token.kind) {
      case "number":
      case "string":
        return { type: "literal", value: token.literal };
      case "name":
        return this.word(token);
      case "op":
        if (token.value === "(") {
          const inner = this.or();
          this.expectOp(")");
          return inner;
        }
        if (token.value === "[") return this.list();
        return this.fail(token);
      default:
        return this.fail(token);
    }
  }

  private word(token: Token): Node {
    const word = token.value;
    if (word === "true" || word === "false") return { type: "literal", value: word === "true" };
    if (word === "null") return { type: "literal", value: null };
    if (["and", "or", "not", "in"].includes(word)) this.fail(token);
    this.checkNotReserved(token);
    if (this.isOp("(")) return this.call(token, []);
    const member = this.isOp(".") || this.isOp("[");
    this.references.push({ name: word, member, position: token.position });
    return { type: "name", name: word, member, position: token.position };
  }

  private checkNotReserved(token: Token): void {
    if (RESERVED_WORDS.includes(token.value)) {
      throw new ExpressionSyntaxError(`"${token.value}" is not allowed (at position ${token.position})`, token.position);
    }
  }

  private call(token: Token, receiver: Node[]): Node {
    const name = token.value;
    if (!(EXPRESSION_HELPERS as readonly string[]).includes(name)) {
      throw new ExpressionSyntaxError(
        `Unknown function "${name}" at position ${token.position}: only ${EXPRESSION_HELPERS.join(", ")} can be called`,
        token.position,
      );
    }
    this.expectOp("(");
    const args = [...receiver, ...this.commaSeparated(")")];
    const helper = name as Helper;
    if (args.length !== HELPER_ARITY[helper]) {
      const count = HELPER_ARITY[helper];
      throw new ExpressionSyntaxError(
        `${name}() takes ${count} argument${count === 1 ? "" : "s"}, got ${args.length} (at position ${token.position})`,
        token.position,
      );
    }
    return { type: "call", helper, args };
  }

  private list(): Node {
    return { type: "list", items: this.commaSeparated("]") };
  }

  private commaSeparated(close: string): Node[] {
    const items: Node[] = [];
    while (!this.isOp(close)) {
      items.push(this.or());
      if (!this.isOp(close)) this.expectOp(",");
    }
    this.index++;
    return items;
  }
}

// ───────────────────────────── values ─────────────────────────────

const hasOwn = Object.prototype.hasOwnProperty;

/** A number, or a string that reads fully as a finite number; otherwise undefined. */
function asNumber(value: unknown): number | undefined {
  if (typeof value === "number") return value;
  if (typeof value !== "string" || value === "") return undefined;
  const number = Number(value);
  if (number !== number || number === Infinity || number === -Infinity) return undefined;
  if (number === 0 && value.trim() === "") return undefined;
  return number;
}

function asBooleanString(value: string): boolean | undefined {
  const lowered = value.trim().toLowerCase();
  return lowered === "true" ? true : lowered === "false" ? false : undefined;
}

/** The language's `==`. */
export function looseEquals(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (left === null || left === undefined || right === null || right === undefined) {
    return (left === null || left === undefined) && (right === null || right === undefined);
  }
  const leftType = typeof left;
  const rightType = typeof right;
  if (leftType === "number" && rightType === "string") return asNumber(right) === left;
  if (leftType === "string" && rightType === "number") return asNumber(left) === right;
  if (leftType === "boolean" && rightType === "string") return asBooleanString(right as string) === left;
  if (leftType === "string" && rightType === "boolean") return asBooleanString(left as string) === right;
  if (Array.isArray(left) && Array.isArray(right)) {
    return left.length === right.length && left.every((value, i) => looseEquals(value, right[i]));
  }
  if (leftType === "object" && rightType === "object" && !Array.isArray(left) && !Array.isArray(right)) {
    const leftKeys = Object.keys(left as object);
    const rightRecord = right as Record<string, unknown>;
    return (
      leftKeys.length === Object.keys(rightRecord).length &&
      leftKeys.every((key) => hasOwn.call(rightRecord, key) && looseEquals((left as Record<string, unknown>)[key], rightRecord[key]))
    );
  }
  return false;
}

/** `<`-style ordering: a negative, zero or positive number, or undefined when the two cannot be ordered. */
function order(left: unknown, right: unknown): number | undefined {
  if (typeof left === "string" && typeof right === "string") {
    const leftNumber = asNumber(left);
    const rightNumber = asNumber(right);
    if (leftNumber !== undefined && rightNumber !== undefined) return leftNumber - rightNumber;
    return left < right ? -1 : left > right ? 1 : 0;
  }
  const leftNumber = asNumber(left);
  const rightNumber = asNumber(right);
  if (leftNumber === undefined || rightNumber === undefined) return undefined;
  return leftNumber - rightNumber;
}

export function isTruthy(value: unknown): boolean {
  if (typeof value === "boolean") return value;
  if (value === null || value === undefined) return false;
  if (typeof value === "number") return value !== 0 && value === value;
  if (typeof value === "string") {
    if (value === "") return false;
    if (value.length > 16) return true;
    const lowered = value.trim().toLowerCase();
    return lowered !== "false" && lowered !== "0" && lowered !== "";
  }
  if (Array.isArray(value)) return value.length > 0;
  return true;
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "string") return `the text ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === "object") return "an object";
  return `${typeof value} ${String(value)}`;
}

// ───────────────────────────── compilation ─────────────────────────────

type Evaluator = (scope: ExpressionScope) => unknown;

function compileNode(node: Node, source: string): Evaluator {
  switch (node.type) {
    case "literal": {
      const value = node.value;
      return () => value;
    }
    case "list": {
      const items = node.items.map((item) => compileNode(item, source));
      return (scope) => items.map((item) => item(scope));
    }
    case "name":
      return compileName(node.name, node.member, source);
    case "member": {
      const object = compileNode(node.object, source);
      const key = node.key;
      return (scope) => readField(object(scope), key, source);
    }
    case "index": {
      const object = compileNode(node.object, source);
      const index = compileNode(node.index, source);
      return (scope) => readIndex(object(scope), index(scope), source);
    }
    case "call":
      return compileCall(node.helper, node.args.map((arg) => compileNode(arg, source)), source);
    case "unary":
      return compileUnary(node.op, compileNode(node.operand, source), source);
    case "binary":
      return compileBinary(node.op, compileNode(node.left, source), compileNode(node.right, source), source);
  }
}

function compileName(name: string, member: boolean, source: string): Evaluator {
  const unknown = (scope: ExpressionScope): never => {
    const what = scope.item === undefined ? "no upstream node that succeeded has that id" : "the item has no such field and no upstream node that succeeded has that id";
    throw new ExpressionError(`Unknown name "${name}" in expression ${JSON.stringify(source)}: ${what}`);
  };
  if (name === "item") {
    return (scope) => {
      if (!("item" in scope) || scope.item === undefined) {
        throw new ExpressionError(`"item" in expression ${JSON.stringify(source)} only exists in a FILTER expression`);
      }
      return scope.item;
    };
  }
  const fromItem = (item: unknown): boolean => item !== null && typeof item === "object" && hasOwn.call(item, name);
  if (member) {
    return (scope) => {
      const nodes = scope.nodes;
      if (hasOwn.call(nodes, name)) return nodes[name];
      const item = scope.item;
      if (fromItem(item)) return (item as Record<string, unknown>)[name];
      return unknown(scope);
    };
  }
  return (scope) => {
    const item = scope.item;
    if (fromItem(item)) return (item as Record<string, unknown>)[name];
    const nodes = scope.nodes;
    if (hasOwn.call(nodes, name)) return nodes[name];
    return unknown(scope);
  };
}

function readField(object: unknown, key: string, source: string): unknown {
  if (object !== null && typeof object === "object" && !Array.isArray(object) && hasOwn.call(object, key)) {
    return (object as Record<string, unknown>)[key];
  }
  const why = object !== null && typeof object === "object" && !Array.isArray(object) ? "there is no such field" : `it is read from ${describe(object)}`;
  throw new ExpressionError(`Field "${key}" in expression ${JSON.stringify(source)} does not exist: ${why}`);
}

function readIndex(object: unknown, index: unknown, source: string): unknown {
  if (Array.isArray(object) || typeof object === "string") {
    if (typeof index !== "number" || !Number.isInteger(index)) {
      throw new ExpressionError(`Index ${describe(index)} in expression ${JSON.stringify(source)} is not a whole number`);
    }
    return index >= 0 && index < object.length ? object[index] : null;
  }
  if (typeof index === "string") return readField(object, index, source);
  throw new ExpressionError(`Cannot index ${describe(object)} with ${describe(index)} in expression ${JSON.stringify(source)}`);
}

function compileCall(helper: Helper, args: Evaluator[], source: string): Evaluator {
  const [first, second] = args;
  const text = (value: unknown): string => (value === null || value === undefined ? "" : typeof value === "object" ? JSON.stringify(value) : String(value));
  switch (helper) {
    case "lower":
      return (scope) => text(first(scope)).toLowerCase();
    case "upper":
      return (scope) => text(first(scope)).toUpperCase();
    case "len":
      return (scope) => length(first(scope), source);
    case "contains":
      return (scope) => contains(first(scope), second(scope), source);
    case "startsWith":
      return (scope) => text(first(scope)).startsWith(text(second(scope)));
    case "endsWith":
      return (scope) => text(first(scope)).endsWith(text(second(scope)));
  }
}

function length(value: unknown, source: string): number {
  if (typeof value === "string" || Array.isArray(value)) return value.length;
  if (value === null || value === undefined) return 0;
  if (typeof value === "object") return Object.keys(value).length;
  throw new ExpressionError(`len() in expression ${JSON.stringify(source)} cannot measure ${describe(value)}`);
}

/** `contains(haystack, needle)` and `needle in haystack`. */
function contains(haystack: unknown, needle: unknown, source: string): boolean {
  if (Array.isArray(haystack)) return haystack.some((element) => looseEquals(element, needle));
  if (typeof haystack === "string") return haystack.includes(needle === null || needle === undefined ? "" : String(needle));
  if (haystack === null || haystack === undefined) return false;
  if (typeof haystack === "object") return typeof needle === "string" && hasOwn.call(haystack, needle);
  throw new ExpressionError(`"in" in expression ${JSON.stringify(source)} cannot search ${describe(haystack)}`);
}

function compileUnary(op: "!" | "-" | "+", operand: Evaluator, source: string): Evaluator {
  if (op === "!") return (scope) => !isTruthy(operand(scope));
  const sign = op === "-" ? -1 : 1;
  return (scope) => sign * numeric(operand(scope), op, source);
}

function numeric(value: unknown, op: string, source: string): number {
  const number = asNumber(value);
  if (number === undefined) {
    throw new ExpressionError(`"${op}" in expression ${JSON.stringify(source)} needs numbers, got ${describe(value)}`);
  }
  return number;
}

function compileBinary(op: string, left: Evaluator, right: Evaluator, source: string): Evaluator {
  switch (op) {
    case "||":
      return (scope) => isTruthy(left(scope)) || isTruthy(right(scope));
    case "&&":
      return (scope) => isTruthy(left(scope)) && isTruthy(right(scope));
    case "==":
      return (scope) => looseEquals(left(scope), right(scope));
    case "!=":
      return (scope) => !looseEquals(left(scope), right(scope));
    case "<":
      return (scope) => (order(left(scope), right(scope)) ?? NaN) < 0;
    case "<=":
      return (scope) => (order(left(scope), right(scope)) ?? NaN) <= 0;
    case ">":
      return (scope) => (order(left(scope), right(scope)) ?? NaN) > 0;
    case ">=":
      return (scope) => (order(left(scope), right(scope)) ?? NaN) >= 0;
    case "in":
      return (scope) => contains(right(scope), left(scope), source);
    case "notin":
      return (scope) => !contains(right(scope), left(scope), source);
    case "+":
      return (scope) => add(left(scope), right(scope), source);
    default:
      return compileArithmetic(op, left, right, source);
  }
}

function add(left: unknown, right: unknown, source: string): unknown {
  if (typeof left === "number" && typeof right === "number") return left + right;
  if (typeof left === "number" || typeof right === "number") {
    const leftNumber = asNumber(left);
    const rightNumber = asNumber(right);
    if (leftNumber !== undefined && rightNumber !== undefined) return leftNumber + rightNumber;
  }
  if (typeof left === "string" || typeof right === "string") {
    const text = (value: unknown) => (value === null || value === undefined ? "" : typeof value === "object" ? JSON.stringify(value) : String(value));
    return text(left) + text(right);
  }
  if (Array.isArray(left) && Array.isArray(right)) return [...left, ...right];
  throw new ExpressionError(`"+" in expression ${JSON.stringify(source)} cannot add ${describe(left)} and ${describe(right)}`);
}

function compileArithmetic(op: string, left: Evaluator, right: Evaluator, source: string): Evaluator {
  return (scope) => {
    const a = numeric(left(scope), op, source);
    const b = numeric(right(scope), op, source);
    switch (op) {
      case "-":
        return a - b;
      case "*":
        return a * b;
      default:
        if (b === 0) throw new ExpressionError(`Division by zero in expression ${JSON.stringify(source)}`);
        return op === "/" ? a / b : a % b;
    }
  };
}

// ───────────────────────────── entry point ─────────────────────────────

/** Parses and compiles once; throws ExpressionSyntaxError (with a 0-based position) on bad input. */
export function compileExpression(source: string): CompiledExpression {
  if (typeof source !== "string") throw new ExpressionSyntaxError("An expression must be text", 0);
  if (source.length > MAX_SOURCE_LENGTH) {
    throw new ExpressionSyntaxError(`Expression is longer than ${MAX_SOURCE_LENGTH} characters`, MAX_SOURCE_LENGTH);
  }
  if (source.trim() === "") throw new ExpressionSyntaxError("Expression is empty", 0);
  const parser = new Parser(source, new Lexer(source));
  const ast = parser.parse();
  const evaluate = compileNode(ast, source);
  const references = parser.references;
  return {
    source,
    evaluate: (scope) => evaluate(scope),
    names: () => [...new Set(references.map((reference) => reference.name))],
    references: () => references.map((reference) => ({ ...reference })),
  };
}
